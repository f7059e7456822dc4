import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { selfView } from '../users/service.js';
import { nowSeconds } from '../db.js';
import { sessionView, type IssuedSession } from './service.js';
import { accountOf } from '../context.js';

export const REFRESH_COOKIE = 'new_api_refresh';
export const HINT_COOKIE = 'new_api_has_session';
const REFRESH_PATH = '/api/user/auth';

/** Writes the HttpOnly refresh cookie and the readable session hint, both living as long as the session. */
export function setSessionCookies(req: FastifyRequest, reply: FastifyReply, issued: IssuedSession) {
  const secure = accountOf(req).config.sessionCookieSecure;
  const maxAge = Math.max(1, Number(issued.session.expires_at) - nowSeconds());
  const common = { sameSite: 'strict' as const, secure, maxAge };
  reply.setCookie(REFRESH_COOKIE, issued.refreshToken, { ...common, httpOnly: true, path: REFRESH_PATH });
  reply.setCookie(HINT_COOKIE, '1', { ...common, httpOnly: false, path: '/' });
}

export function clearSessionCookies(req: FastifyRequest, reply: FastifyReply) {
  const secure = accountOf(req).config.sessionCookieSecure;
  const common = { sameSite: 'strict' as const, secure, maxAge: 0, expires: new Date(1000) };
  reply.setCookie(REFRESH_COOKIE, '', { ...common, httpOnly: true, path: REFRESH_PATH });
  reply.setCookie(HINT_COOKIE, '', { ...common, httpOnly: false, path: '/' });
}

/** The reference's login/refresh result: access token, the session and the safe user view. */
export function authBundle(issued: IssuedSession) {
  return {
    access_token: issued.accessToken,
    token_type: 'Bearer',
    access_expires_at: issued.accessExpiresAt,
    session: sessionView(issued.session, issued.session.sid),
    user: selfView(issued.user),
  };
}

/** Sets the cookies and returns the envelope for a freshly issued or rotated session. */
export function sendSession(req: FastifyRequest, reply: FastifyReply, issued: IssuedSession) {
  setSessionCookies(req, reply, issued);
  return { success: true, message: '', data: authBundle(issued) };
}

export function clientInfo(req: FastifyRequest) {
  const ua = req.headers['user-agent'];
  return { ip: req.ip, userAgent: typeof ua === 'string' ? ua : '' };
}

export function bearerOf(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(h.trim());
  return (m ? m[1] : h).trim() || undefined;
}

export function expectedSidOf(req: FastifyRequest): string | undefined {
  const v = req.headers['x-auth-session'];
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}
