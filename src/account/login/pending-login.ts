import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ok } from '../../kit/http/envelope.js';
import { nowSeconds } from '../db.js';
import { accountOf } from '../context.js';

/**
 * new-api's dashboard answers `require_2fa` by posting only `{code}` to /api/user/login/2fa: the reference
 * keeps the pending login in its session cookie. Here the login-verification flow token itself rides in an
 * HttpOnly, SameSite=Strict cookie scoped to /api/user/login, living as long as the flow (5 minutes).
 */
export const PENDING_LOGIN_COOKIE = 'new_api_pending_login';
const PENDING_LOGIN_PATH = '/api/user/login';

/** Answers a second-step challenge (the Gen B body with Gen A's `require_2fa`) and sets the pending-login cookie. */
export function sendChallenge(req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown>) {
  const token = data.flow_token;
  const expiresAt = Number(data.expires_at);
  if (typeof token === 'string' && Number.isFinite(expiresAt)) {
    reply.setCookie(PENDING_LOGIN_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: accountOf(req).config.sessionCookieSecure,
      path: PENDING_LOGIN_PATH,
      maxAge: Math.max(1, expiresAt - nowSeconds()),
    });
  }
  return ok(data);
}

/** The flow token of the pending login named by the cookie, if any. */
export function pendingLoginOf(req: FastifyRequest): string | undefined {
  const value = req.cookies[PENDING_LOGIN_COOKIE];
  return value ? value : undefined;
}

export function clearPendingLogin(req: FastifyRequest, reply: FastifyReply) {
  reply.setCookie(PENDING_LOGIN_COOKIE, '', {
    httpOnly: true,
    sameSite: 'strict',
    secure: accountOf(req).config.sessionCookieSecure,
    path: PENDING_LOGIN_PATH,
    maxAge: 0,
    expires: new Date(1000),
  });
}
