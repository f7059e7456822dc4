import type { Redis } from 'ioredis';

export interface RateLimitResult {
  allowed: boolean;
  /** Seconds until the current window ends. */
  retryAfter: number;
  remaining: number;
}

/** Fixed-window counters: `limit` hits per `windowSeconds` for each key. */
export interface RateLimiter {
  hit(key: string, limit: number, windowSeconds: number): Promise<RateLimitResult>;
  reset(key: string): Promise<void>;
}

export function memoryRateLimiter(): RateLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>();
  let lastSweep = Date.now();
  return {
    async hit(key, limit, windowSeconds) {
      const now = Date.now();
      if (now - lastSweep > 60_000) {
        for (const [k, w] of windows) if (w.resetAt <= now) windows.delete(k);
        lastSweep = now;
      }
      let w = windows.get(key);
      if (!w || w.resetAt <= now) {
        w = { count: 0, resetAt: now + windowSeconds * 1000 };
        windows.set(key, w);
      }
      w.count++;
      return {
        allowed: w.count <= limit,
        retryAfter: Math.max(1, Math.ceil((w.resetAt - now) / 1000)),
        remaining: Math.max(0, limit - w.count),
      };
    },
    async reset(key) {
      windows.delete(key);
    },
  };
}

// INCR and set the expiry on the first hit in one atomic step; returns [count, ttl ms].
const HIT_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local t = redis.call('PTTL', KEYS[1])
if t < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); t = tonumber(ARGV[1]) end
return {c, t}`;

export function redisRateLimiter(redis: Redis, prefix: string): RateLimiter {
  return {
    async hit(key, limit, windowSeconds) {
      const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, `${prefix}:${key}`, windowSeconds * 1000)) as [number, number];
      return { allowed: count <= limit, retryAfter: Math.max(1, Math.ceil(ttl / 1000)), remaining: Math.max(0, limit - count) };
    },
    async reset(key) {
      await redis.del(`${prefix}:${key}`);
    },
  };
}
