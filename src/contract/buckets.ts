import type { FastifyRequest } from 'fastify';
import { AppError } from '../kit/http/errors.js';
import type { RateLimiter } from '../kit/ratelimit/index.js';
import type { RateLimitBucket } from './registry.js';

/** A fixed-window bucket per client IP; 429 RATE_LIMITED with Retry-After when exhausted. */
export function ipBucket(limiter: RateLimiter, name: string, limit: number, windowSeconds: number, enabled = true): RateLimitBucket {
  return {
    per: 'ip',
    async check(req: FastifyRequest) {
      if (!enabled) return;
      const r = await limiter.hit(`${name}:${req.ip}`, limit, windowSeconds);
      if (!r.allowed) {
        throw new AppError('RATE_LIMITED', { params: { seconds: r.retryAfter }, headers: { 'Retry-After': String(r.retryAfter) } });
      }
    },
  };
}

/** A fixed-window bucket per authenticated principal, named by `keyOf` (null skips the check). */
export function principalBucket(
  limiter: RateLimiter,
  name: string,
  limit: number,
  windowSeconds: number,
  keyOf: (req: FastifyRequest) => string | null,
): RateLimitBucket {
  return {
    per: 'user',
    async check(req: FastifyRequest) {
      const key = keyOf(req);
      if (key === null) return;
      const r = await limiter.hit(`${name}:${key}`, limit, windowSeconds);
      if (!r.allowed) {
        throw new AppError('RATE_LIMITED', { params: { seconds: r.retryAfter }, headers: { 'Retry-After': String(r.retryAfter) } });
      }
    },
  };
}
