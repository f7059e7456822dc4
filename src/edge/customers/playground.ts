import { customerOwnerName, TOKEN_STATUS, type CustomerPort, type PlaygroundAnswer } from '../../contract/customer.js';
import { AppError } from '../../kit/http/errors.js';
import type { RateLimiter } from '../../kit/ratelimit/index.js';
import type { EdgeContext } from '../context.js';
import { edgeErrorOf } from '../errors.js';
import type { EdgeIdentity } from '../keys/service.js';
import type { SyncCalls } from '../calls/service.js';
import { ensureCustomerOwner } from './owners.js';

/** The longest token name a run keeps (edge_runs.token_name). */
const TOKEN_NAME_MAX = 64;

/**
 * The playground chat (new-api's /pg/chat/completions): an account user's call as any call of a key — the
 * same admission switch, per-minute limit (EDGE_RATE_LIMIT_PER_MINUTE, counted per user) and SyncCalls
 * (reserve, relay, settle) — but under a temporary token of no key and no limits, named
 * `playground-<group>` as new-api names it, which the usage log shows. Refusals are answers in OpenAI's shape.
 */
export function playgroundPart(ctx: EdgeContext, calls: Pick<SyncCalls, 'call'>, limiter: RateLimiter): Pick<CustomerPort, 'playgroundChat'> {
  return {
    async playgroundChat(c): Promise<PlaygroundAnswer> {
      try {
        if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
        const ownerId = await ensureCustomerOwner(ctx.db, c.userId);
        const hit = await limiter.hit(`playground-owner:${ownerId}`, ctx.config.edge.rateLimitPerMinute, 60);
        if (!hit.allowed) return { kind: 'refused', ...edgeErrorOf({ code: 'rate_limited', params: { seconds: hit.retryAfter } }, c.lang), retryAfter: hit.retryAfter };
        const identity: EdgeIdentity = {
          keyId: '',
          ownerId,
          owner: customerOwnerName(c.userId),
          // A disabled user has no session to call from (disabling ends them all).
          ownerSuspended: false,
          token: { id: 0, name: `playground-${c.group}`.slice(0, TOKEN_NAME_MAX), status: TOKEN_STATUS.enabled, expiredTime: -1, models: null, ips: null },
        };
        const answer = await calls.call({ identity, format: 'chat', body: c.body, requestId: c.requestId, signal: c.signal });
        if (answer.kind === 'bytes') throw new Error('a chat is never answered in bytes');
        return answer.kind === 'json' ? { kind: 'json', body: answer.body } : { kind: 'stream', contentType: answer.contentType, pieces: answer.pieces };
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        return { kind: 'refused', ...edgeErrorOf({ code: e.code, params: e.options.params, data: e.options.data }, c.lang) };
      }
    },
  };
}
