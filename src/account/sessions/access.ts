import { AppError } from '../../kit/http/errors.js';
import { TtlCache } from '../../kit/cache/ttl-cache.js';
import { sha256 } from '../../kit/crypto/tokens.js';
import { nowSeconds, USER_STATUS } from '../db.js';
import { usersStore, type UserRow } from '../users/store.js';
import { sessionsStore, type SessionRow } from './store.js';
import type { AccessTokens } from './tokens.js';
import type { AccountContext, AccountIdentity } from '../context.js';

/** How long cached session and user state may be served before it is read again (cross-instance bound). */
export const STATE_CACHE_MS = 1000;
/** The bus channel on which instances tell each other which cached state to drop. */
const INVALIDATE = 'account:invalidate';

type SessionState = Pick<SessionRow, 'user_id' | 'status' | 'user_auth_version' | 'expires_at'> | null;
type UserState = Pick<UserRow, 'role' | 'status' | 'auth_version'> | null;

/**
 * Turns a bearer credential into the caller on every authenticated request. Session and user state are
 * cached for at most STATE_CACHE_MS and dropped at once on this instance when they change (and on the
 * others through the invalidation bus), so a revocation takes effect on the very next request here.
 */
export function createAccessResolver(ctx: AccountContext, tokens: AccessTokens) {
  const { db } = ctx.database;
  const sessionCache = new TtlCache<string, SessionState>(STATE_CACHE_MS, 50000);
  const userCache = new TtlCache<number, UserState>(STATE_CACHE_MS, 50000);

  async function sessionState(sid: string): Promise<SessionState> {
    let s = sessionCache.get(sid);
    if (s === undefined) {
      const row = await sessionsStore.bySid(db, sid);
      s = row
        ? { user_id: Number(row.user_id), status: row.status, user_auth_version: row.user_auth_version, expires_at: Number(row.expires_at) }
        : null;
      sessionCache.set(sid, s);
    }
    return s;
  }

  async function userState(userId: number): Promise<UserState> {
    let u = userCache.get(userId);
    if (u === undefined) {
      const row = await usersStore.byId(db, userId);
      u = row ? { role: row.role, status: row.status, auth_version: row.auth_version } : null;
      userCache.set(userId, u);
    }
    return u;
  }

  /** Resolves a bearer credential (access token or personal access token); throws the reference's 401 codes. */
  async function authenticate(credential: string): Promise<AccountIdentity> {
    if (tokens.looksLikeJwt(credential)) {
      const v = await tokens.verify(credential);
      if (!v.ok) throw new AppError(v.reason === 'expired' ? 'AUTH_TOKEN_EXPIRED' : 'AUTH_UNAUTHORIZED');
      const { userId, sid, uv } = v.claims;
      const s = await sessionState(sid);
      if (!s || s.status !== 'active' || s.expires_at <= nowSeconds() || s.user_id !== userId || s.user_auth_version !== uv) {
        throw new AppError('AUTH_SESSION_REVOKED');
      }
      const u = await userState(userId);
      if (!u) throw new AppError('AUTH_SESSION_REVOKED');
      if (u.status !== USER_STATUS.enabled) throw new AppError('AUTH_USER_DISABLED');
      if (u.auth_version !== uv) throw new AppError('AUTH_SESSION_REVOKED');
      return { userId, role: u.role, sid, authVersion: uv, via: 'access_token' };
    }
    const user = await usersStore.byAccessTokenHash(db, sha256(credential));
    if (!user) throw new AppError('AUTH_UNAUTHORIZED');
    if (user.status !== USER_STATUS.enabled) throw new AppError('AUTH_USER_DISABLED');
    return { userId: Number(user.id), role: user.role, authVersion: user.auth_version, via: 'personal_token' };
  }

  return {
    authenticate,
    /** Drops cached state of a user on every instance (role, status or auth version changed). */
    async invalidateUser(userId: number) {
      userCache.delete(userId);
      await ctx.bus.publish(INVALIDATE, `u:${userId}`);
    },
    /** Drops cached state of one session on every instance. */
    async invalidateSession(sid: string) {
      sessionCache.delete(sid);
      await ctx.bus.publish(INVALIDATE, `s:${sid}`);
    },
    /** Hears the invalidations of every instance (this one's included); once, when the account starts. */
    listenForInvalidations() {
      return ctx.bus.subscribe(INVALIDATE, (m) => {
        if (m.startsWith('u:')) userCache.delete(Number(m.slice(2)));
        else if (m.startsWith('s:')) sessionCache.delete(m.slice(2));
      });
    },
  };
}
