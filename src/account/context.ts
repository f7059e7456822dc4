import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Database } from '../kit/db/index.js';
import type { Bus } from '../kit/cache/bus.js';
import type { RateLimiter } from '../kit/ratelimit/index.js';
import type { AccountDB } from './db.js';

/**
 * The account's infrastructure, shared by every service: no service is reached through it. Each service
 * is handed the peers it needs when app.ts composes them.
 */
export interface AccountContext {
  config: Config;
  database: Database<AccountDB>;
  log: Logger;
  /** Cache invalidation between instances (sessions/access.ts). */
  bus: Bus;
  limiter: RateLimiter;
  /** SESSION_SECRET (or the generated one kept in DATA_DIR). */
  secret: string;
}

/** The authenticated caller of an account request. */
export interface AccountIdentity {
  userId: number;
  role: number;
  /** Set for a browser login session (access token); absent for a personal access token. */
  sid?: string;
  authVersion: number;
  via: 'access_token' | 'personal_token';
}

declare module 'fastify' {
  interface FastifyInstance {
    account: AccountContext;
  }
  interface FastifyRequest {
    accountIdentity?: AccountIdentity;
  }
}

export function accountOf(req: FastifyRequest): AccountContext {
  return req.server.account;
}
