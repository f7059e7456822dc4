import crypto from 'node:crypto';
import type { Transaction } from 'kysely';
import { AppError } from '../../kit/http/errors.js';
import { deriveKey, hmac, randomToken, safeEqual } from '../../kit/crypto/tokens.js';
import { nowSeconds, USER_STATUS, type AccountDB } from '../db.js';
import { usersStore, type UserRow } from '../users/store.js';
import { sessionsStore, type SessionRow } from './store.js';
import { createAccessTokens } from './tokens.js';
import { createAccessResolver } from './access.js';
import type { AccountContext, AccountIdentity } from '../context.js';

/** Length of the tag that ends every refresh secret this server issues (16 bytes, base64url). */
const TAG_LENGTH = 22;
/** How many rotations behind a token may be and still be recognised by following the chain forward. */
const MAX_GENERATIONS_BEHIND = 16;

export interface ClientInfo {
  ip: string;
  userAgent: string;
}

export interface IssuedSession {
  session: SessionRow;
  user: UserRow;
  refreshToken: string;
  accessToken: string;
  accessExpiresAt: number;
}


/** Splits a refresh cookie `<sid>.<secret>`; null when malformed. */
export function parseRefreshToken(value: string | undefined): { sid: string; secret: string } | null {
  if (!value) return null;
  const m = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{20,128})$/.exec(value);
  return m ? { sid: m[1], secret: m[2] } : null;
}

export function sessionView(s: SessionRow, currentSid?: string) {
  return {
    sid: s.sid,
    current: s.sid === currentSid,
    login_method: s.login_method,
    ip: s.ip,
    user_agent: s.user_agent,
    created_at: Number(s.created_at),
    last_active_at: Number(s.last_active_at),
    expires_at: Number(s.expires_at),
  };
}

/** Tells a user by mail that how they sign in changed (ASVS 6.3.7), after the change is committed; never throws. */
export interface SecurityNotices {
  securityChanged(userId: number, reason: string): Promise<void>;
}

export function createSessionsService(ctx: AccountContext, notices: SecurityNotices) {
  const { db, dialect } = ctx.database;
  const cfg = ctx.config.sessions;
  const tokens = createAccessTokens(ctx.secret, cfg.accessTokenTtlSeconds);
  const refreshKey = deriveKey(ctx.secret, 'refresh');
  const rotateKey = deriveKey(ctx.secret, 'refresh-rotate');

  const tagKey = deriveKey(ctx.secret, 'refresh-tag');

  const hashSecret = (secret: string) => hmac(refreshKey, secret);
  // Every secret ends in a tag only this server can compute, so a replayed old token is told apart from a
  // guessed one: the first revokes the session (reuse detection), the second revokes nothing.
  const tagOf = (sid: string, body: string) => hmac(tagKey, `${sid}.${body}`).slice(0, TAG_LENGTH);
  const minted = (sid: string, body: string) => body + tagOf(sid, body);
  const issuedHere = (sid: string, secret: string) =>
    secret.length > TAG_LENGTH && safeEqual(secret.slice(-TAG_LENGTH), tagOf(sid, secret.slice(0, -TAG_LENGTH)));
  // Deterministic successor: two tabs refreshing the same token at once compute the same next token.
  const successor = (sid: string, secret: string) => minted(sid, hmac(rotateKey, `${sid}.${secret}`));

  /**
   * Follows the successor chain from a presented secret to the stored one: how many rotations the
   * presented token is behind (0 = current) and the current secret, or null when it is not within reach.
   */
  function catchUp(sid: string, secret: string, storedHash: string): { behind: number; current: string } | null {
    let s = secret;
    for (let behind = 0; behind <= MAX_GENERATIONS_BEHIND; behind++) {
      if (safeEqual(hashSecret(s), storedHash)) return { behind, current: s };
      s = successor(sid, s);
    }
    return null;
  }

  const rotationTimes = (row: SessionRow) => (row.recent_rotations ? row.recent_rotations.split(' ').map(Number) : []);
  /**
   * Until when a token `behind` rotations old may still be presented: the grace window that began when it
   * was rotated away (gotrue's reuse interval is per token too), so a long-stale token cannot ride on a
   * recent rotation. Sessions rotated before rotation times were kept know only their previous token's.
   */
  function graceEnd(row: SessionRow, behind: number): number {
    if (behind === 1) return Number(row.previous_valid_until ?? 0);
    const rotatedAt = rotationTimes(row)[behind - 1];
    return rotatedAt === undefined ? 0 : rotatedAt + cfg.refreshReuseGraceSeconds;
  }

  async function signAccess(session: SessionRow) {
    const { token, expiresAt } = await tokens.sign({
      userId: Number(session.user_id),
      sid: session.sid,
      uv: session.user_auth_version,
      sv: session.version,
    });
    return { accessToken: token, accessExpiresAt: expiresAt };
  }

  const access = createAccessResolver(ctx, tokens);

  /** Drops the cached state of revoked sessions on every instance; returns the sids. */
  async function forget(revoked: string[]): Promise<string[]> {
    for (const sid of revoked) await access.invalidateSession(sid);
    return revoked;
  }

  async function revokeAndForget(sids: string[], reason: string): Promise<string[]> {
    return forget(await sessionsStore.revoke(db, sids, reason, nowSeconds()));
  }

  return {
    tokens,
    invalidateUser: access.invalidateUser,
    invalidateSession: access.invalidateSession,
    listenForInvalidations: access.listenForInvalidations,
    /** Resolves a bearer credential to the caller; throws the reference's 401 codes. */
    authenticate: access.authenticate,

    /**
     * Creates a login session under the caps: the issuance window first (429), then the active cap
     * (409, or evicting the least recently active sessions with policy evict_oldest). The user row is
     * locked for the transaction, so the caps hold exactly under concurrent logins.
     */
    async issue(user: UserRow, loginMethod: string, client: ClientInfo): Promise<IssuedSession> {
      const sid = crypto.randomUUID();
      const secret = minted(sid, randomToken(32));
      const evicted: string[] = [];
      const session = await db.transaction().execute(async (trx) => {
        const now = nowSeconds();
        await usersStore.lock(trx, Number(user.id), dialect);
        const issued = await sessionsStore.countIssuedSince(trx, Number(user.id), now - cfg.issuanceWindowSeconds);
        if (issued >= cfg.issuanceLimit) throw new AppError('AUTH_SESSION_ISSUANCE_LIMIT');
        const active = await sessionsStore.countActive(trx, Number(user.id), now);
        if (active >= cfg.activeLimit) {
          if (cfg.limitPolicy === 'reject') throw new AppError('AUTH_SESSION_LIMIT');
          const victims = await sessionsStore.oldestActive(trx, Number(user.id), now, active - cfg.activeLimit + 1);
          evicted.push(...(await sessionsStore.revoke(trx, victims.map((v) => v.sid), 'evicted_by_limit', now)));
        }
        const row: SessionRow = {
          sid,
          user_id: Number(user.id),
          version: 1,
          user_auth_version: user.auth_version,
          status: 'active',
          refresh_hash: hashSecret(secret),
          previous_refresh_hash: null,
          previous_valid_until: null,
          recent_rotations: null,
          login_method: loginMethod.slice(0, 64),
          ip: client.ip.slice(0, 64),
          user_agent: client.userAgent.slice(0, 512),
          created_at: now,
          last_active_at: now,
          expires_at: now + cfg.sessionTtlSeconds,
          revoked_at: null,
          revoked_reason: null,
        };
        await sessionsStore.insert(trx, row);
        return row;
      });
      for (const e of evicted) await access.invalidateSession(e);
      return { session, user, refreshToken: `${sid}.${secret}`, ...(await signAccess(session)) };
    },

    /**
     * A24: rotates the refresh token (the state machine of gotrue's RefreshTokenGrant, see
     * docs/security.md). An earlier token of the session (at most MAX_GENERATIONS_BEHIND rotations old),
     * presented inside the grace window that began when it was rotated away, answers with the current token
     * and rotates nothing: tabs racing each other keep their session. Any earlier token this server issued for the session,
     * presented after the window, revokes the session. A secret it never issued revokes nothing.
     */
    async refresh(cookie: string | undefined, expectedSid: string | undefined): Promise<IssuedSession> {
      const parsed = parseRefreshToken(cookie);
      if (!parsed) throw new AppError('AUTH_UNAUTHORIZED');
      if (expectedSid && expectedSid !== parsed.sid) throw new AppError('AUTH_SESSION_MISMATCH');
      type Outcome =
        | { kind: 'ok'; session: SessionRow; user: UserRow; secret: string }
        | { kind: 'revoked'; revoke?: string }
        | { kind: 'unknown' }
        | { kind: 'race' };
      const outcome: Outcome = await db.transaction().execute(async (trx): Promise<Outcome> => {
        const now = nowSeconds();
        const row = await sessionsStore.lockBySid(trx, parsed.sid, dialect);
        if (!row || row.status !== 'active' || Number(row.expires_at) <= now) return { kind: 'revoked' };
        // Idle: no refresh for longer than the idle timeout (the access token bounds the rest).
        if (now - Number(row.last_active_at) > cfg.idleTimeoutSeconds) return { kind: 'revoked', revoke: 'idle_timeout' };
        const user = await usersStore.byId(trx, Number(row.user_id));
        if (!user || user.status !== USER_STATUS.enabled || user.auth_version !== row.user_auth_version) {
          return { kind: 'revoked', revoke: 'user_security_changed' };
        }
        const chain = catchUp(row.sid, parsed.secret, row.refresh_hash);
        if (chain?.behind === 0) {
          const next = successor(row.sid, parsed.secret);
          const until = now + cfg.refreshReuseGraceSeconds;
          const rotations = [now, ...rotationTimes(row).filter((t) => now <= t + cfg.refreshReuseGraceSeconds)];
          const recent = rotations.slice(0, MAX_GENERATIONS_BEHIND).join(' ');
          if (!(await sessionsStore.rotate(trx, row.sid, row.refresh_hash, hashSecret(next), until, recent, now))) return { kind: 'race' };
          return { kind: 'ok', session: { ...row, refresh_hash: hashSecret(next), last_active_at: now }, user, secret: next };
        }
        if (chain && now <= graceEnd(row, chain.behind)) return { kind: 'ok', session: row, user, secret: chain.current };
        if (chain || issuedHere(row.sid, parsed.secret)) return { kind: 'revoked', revoke: 'refresh_reuse' };
        return { kind: 'unknown' };
      });
      if (outcome.kind === 'ok') {
        return {
          session: outcome.session,
          user: outcome.user,
          refreshToken: `${outcome.session.sid}.${outcome.secret}`,
          ...(await signAccess(outcome.session)),
        };
      }
      if (outcome.kind === 'revoked') {
        if (outcome.revoke) await revokeAndForget([parsed.sid], outcome.revoke);
        throw new AppError('AUTH_SESSION_REVOKED');
      }
      if (outcome.kind === 'race') throw new AppError('AUTH_REFRESH_RACE');
      throw new AppError('AUTH_UNAUTHORIZED');
    },

    /**
     * A23: revokes exactly one session, named by a bearer access token (even an expired one) or by the
     * refresh cookie. Returns which session was revoked and whether the cookie belongs to it.
     */
    async logout(input: { bearer?: string; cookie?: string; expectedSid?: string }) {
      const parsed = parseRefreshToken(input.cookie);
      if (input.bearer) {
        const v = await tokens.verify(input.bearer, { ignoreExpiry: true });
        if (v.ok) {
          const sid = v.claims.sid;
          if (input.expectedSid && input.expectedSid !== sid) throw new AppError('AUTH_SESSION_MISMATCH');
          const row = await sessionsStore.bySid(db, sid);
          if (row && Number(row.user_id) === v.claims.userId) await revokeAndForget([sid], 'logout');
          return { revokedSid: sid, clearCookie: parsed?.sid === sid };
        }
      }
      if (!parsed) return { revokedSid: null, clearCookie: true };
      if (input.expectedSid && input.expectedSid !== parsed.sid) throw new AppError('AUTH_SESSION_MISMATCH');
      const row = await sessionsStore.bySid(db, parsed.sid);
      const presented = hashSecret(parsed.secret);
      const matches =
        row &&
        (safeEqual(presented, row.refresh_hash) ||
          (row.previous_refresh_hash !== null &&
            safeEqual(presented, row.previous_refresh_hash) &&
            nowSeconds() <= Number(row.previous_valid_until ?? 0)));
      if (!matches) return { revokedSid: null, clearCookie: true };
      await revokeAndForget([parsed.sid], 'logout');
      return { revokedSid: parsed.sid, clearCookie: true };
    },

    /** A43: the caller's visible sessions, current first, then most recently active. */
    async list(identity: AccountIdentity) {
      const rows = await sessionsStore.listVisible(db, identity.userId, identity.authVersion, nowSeconds());
      const views = rows.map((r) => sessionView(r as SessionRow, identity.sid));
      return [...views.filter((v) => v.current), ...views.filter((v) => !v.current)];
    },

    /** A44: revokes one of the caller's own active sessions (404 for anything else). */
    async revokeOwn(identity: AccountIdentity, sid: string) {
      const row = await sessionsStore.bySid(db, sid);
      if (!row || Number(row.user_id) !== identity.userId || row.status !== 'active' || Number(row.expires_at) <= nowSeconds()) {
        throw new AppError('AUTH_SESSION_NOT_FOUND');
      }
      const revoked = await revokeAndForget([sid], 'user_revoked');
      if (revoked.length === 0) throw new AppError('AUTH_SESSION_NOT_FOUND');
      return { revoked_sid: sid, current: sid === identity.sid };
    },

    /** A45: revokes every other active session of the caller, including ones of older auth versions. */
    async revokeOthers(identity: AccountIdentity) {
      return (await forget(await sessionsStore.revokeAllOf(db, identity.userId, identity.sid ?? null, 'user_revoked_others', nowSeconds()))).length;
    },

    /** Revokes every session of a user (password reset, admin actions, security changes). */
    async revokeAllOfUser(userId: number, reason: string, keepSid: string | null = null) {
      return (await forget(await sessionsStore.revokeAllOf(db, userId, keepSid, reason, nowSeconds()))).length;
    },

    /** The newest stored sign-in time per user among these (the admin user list). */
    lastLoginOf(userIds: number[]) {
      return sessionsStore.lastLoginOf(db, userIds);
    },

    /** Operator action (CLI `user logout --all`): ends every session of every user. */
    async revokeEveryone(reason: string) {
      return (await forget(await sessionsStore.revokeEveryone(db, reason, nowSeconds()))).length;
    },

    /**
     * After a security change (2FA, passkey, email...): bumps the user's auth version, revokes every
     * other session, and moves the current session to the new version with a fresh access token. Returns
     * the reference's rotation object {access_token, token_type, access_expires_at, session}. `change`, when
     * given, is the change itself, made in the same transaction (a new password never outlives the sessions).
     */
    async rotateAuthority(identity: AccountIdentity, reason: string, change?: (trx: Transaction<AccountDB>) => Promise<void>) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const session = await db.transaction().execute(async (trx) => {
        const now = nowSeconds();
        if (change) await change(trx);
        await trx
          .updateTable('users')
          .set((eb) => ({ auth_version: eb('auth_version', '+', 1) }))
          .where('id', '=', identity.userId)
          .execute();
        const user = await usersStore.byId(trx, identity.userId);
        await trx
          .updateTable('user_sessions')
          .set({ status: 'revoked', revoked_at: now, revoked_reason: reason })
          .where('user_id', '=', identity.userId)
          .where('status', '=', 'active')
          .where('sid', '!=', identity.sid!)
          .execute();
        await trx
          .updateTable('user_sessions')
          .set({ user_auth_version: user!.auth_version })
          .where('sid', '=', identity.sid!)
          .execute();
        return (await sessionsStore.bySid(trx, identity.sid!))!;
      });
      await access.invalidateUser(identity.userId);
      await access.invalidateSession(identity.sid);
      await notices.securityChanged(identity.userId, reason);
      const { accessToken, accessExpiresAt } = await signAccess(session);
      return { access_token: accessToken, token_type: 'Bearer', access_expires_at: accessExpiresAt, session: sessionView(session, session.sid) };
    },

    /** Removes revoked and expired rows past the retention (7 days, or the issuance window if longer). */
    async purge() {
      const retention = Math.max(7 * 86400, cfg.issuanceWindowSeconds);
      await sessionsStore.purge(db, nowSeconds() - retention);
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
