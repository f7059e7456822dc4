import crypto from 'node:crypto';
import { AppError } from '../../kit/http/errors.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { sha256 } from '../../kit/crypto/tokens.js';
import { nowSeconds, USER_STATUS } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { ClientInfo, SessionsService } from '../sessions/service.js';
import type { LoginOutcome, LoginService } from '../login/service.js';
import type { FlowsService } from '../flows/service.js';
import type { UserRow } from '../users/store.js';
import type { BindingsService } from '../bindings/service.js';
import { bindingDb } from '../bindings/store.js';

const KIND = { slug: 'telegram', name: 'Telegram', column: 'telegram_id' as const };
export const TELEGRAM_BIND_TTL_SECONDS = 300;
const MAX_AGE = 300;
const MAX_FUTURE = 120;

/** A06 result codes (the reference's TELEGRAM_BIND_* set). */
export class TelegramBindError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Telegram Login Widget: HMAC-SHA256 over the sorted "key=value" lines keyed by SHA-256(bot token),
 * auth_date freshness, and each signed assertion accepted once.
 */
export function createTelegramService(
  ctx: AccountContext,
  { bindings, flows, login, sessions }: { bindings: BindingsService; flows: FlowsService; login: LoginService; sessions: SessionsService },
) {
  const cfg = ctx.config.mailOAuth.telegram;
  const db = bindingDb(ctx);

  /** Verifies widget data from a raw query string and records the assertion; returns the Telegram user id. */
  async function verify(rawQuery: string): Promise<string> {
    if (!cfg.botToken) throw new AppError('TELEGRAM_DISABLED');
    const params = new URLSearchParams(rawQuery);
    const fields = new Map<string, string>();
    for (const [k, v] of params) {
      if (fields.has(k) || k.length > 64 || v.length > 1024) throw new AppError('TELEGRAM_INVALID_REQUEST');
      fields.set(k, v);
    }
    const hash = fields.get('hash') ?? '';
    const id = fields.get('id') ?? '';
    const authDate = Number(fields.get('auth_date'));
    if (!/^[0-9a-f]{64}$/.test(hash) || !/^\d{1,20}$/.test(id) || !Number.isInteger(authDate)) throw new AppError('TELEGRAM_INVALID_REQUEST');
    fields.delete('hash');
    const data = [...fields.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('\n');
    const key = crypto.createHash('sha256').update(cfg.botToken).digest();
    const expected = crypto.createHmac('sha256', key).update(data).digest();
    if (!crypto.timingSafeEqual(expected, Buffer.from(hash, 'hex'))) throw new AppError('TELEGRAM_INVALID_REQUEST');
    const now = nowSeconds();
    if (now - authDate > MAX_AGE || authDate - now > MAX_FUTURE) throw new AppError('TELEGRAM_INVALID_REQUEST');
    try {
      await db.insertInto('telegram_assertions').values({ hash: sha256(hash), expires_at: authDate + MAX_AGE + MAX_FUTURE }).execute();
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('TELEGRAM_ASSERTION_USED');
      throw e;
    }
    return id;
  }

  return {
    verify,

    /** A08: login of an already bound Telegram account. */
    async login(rawQuery: string, client: ClientInfo): Promise<LoginOutcome> {
      const id = await verify(rawQuery);
      const user = await bindings.findUser(KIND, id);
      if (!user) throw new AppError('TELEGRAM_NOT_BOUND');
      if (user.deleted_at) throw new AppError('OAUTH_USER_DELETED');
      if (user.status !== USER_STATUS.enabled) throw new AppError('OAUTH_USER_BANNED');
      return login.completeLogin(user as UserRow, 'telegram', client);
    },

    /** A07: a 5-minute binding flow tied to the caller's browser session. */
    async startBind(identity: AccountIdentity) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      if (!cfg.botToken) throw new AppError('TELEGRAM_DISABLED');
      const flow = await flows.create({
        purpose: 'telegram_bind',
        ttlSeconds: TELEGRAM_BIND_TTL_SECONDS,
        userId: identity.userId,
        sessionId: identity.sid,
        provider: 'telegram',
        intent: 'bind',
      });
      return { flow_token: flow.token, callback_url: `/api/oauth/chatbot/bind/${flow.token}`, expires_at: flow.expiresAt, bot_name: cfg.botName };
    },

    /** A06: the widget's redirect; throws TelegramBindError with the reference's reason. */
    async finishBind(token: string, rawQuery: string) {
      if (!cfg.botToken) throw new TelegramBindError('DISABLED');
      const flow = await flows.peek(token, 'telegram_bind');
      if (!flow || flow.userId === null || !flow.sessionId) throw new TelegramBindError('FLOW_INVALID');
      let id: string;
      try {
        id = await verify(rawQuery);
      } catch {
        throw new TelegramBindError('INVALID_REQUEST');
      }
      if (!(await flows.consume(token, 'telegram_bind'))) throw new TelegramBindError('FLOW_INVALID');
      const user = await bindings.userById(flow.userId);
      if (!user) throw new TelegramBindError('USER_DELETED');
      if (user.status !== USER_STATUS.enabled) throw new TelegramBindError('USER_DISABLED');
      const identity: AccountIdentity = { userId: flow.userId, role: user.role, sid: flow.sessionId, authVersion: user.auth_version, via: 'access_token' };
      const live = await sessions.list(identity);
      if (!live.some((s) => s.current)) throw new TelegramBindError('SESSION_INVALID');
      try {
        await bindings.bind(flow.userId, KIND, id);
      } catch (e) {
        if (e instanceof AppError && e.code === 'ACCOUNT_ALREADY_BOUND') throw new TelegramBindError('ALREADY_BOUND');
        throw e;
      }
    },
  };
}

export type TelegramService = ReturnType<typeof createTelegramService>;
