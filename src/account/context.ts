import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Database } from '../kit/db/index.js';
import type { Bus } from '../kit/cache/bus.js';
import type { RateLimiter } from '../kit/ratelimit/index.js';
import type { AccountDB } from './db.js';
import type { UsersService } from './users/service.js';
import type { SessionsService } from './sessions/service.js';
import type { LoginService } from './login/service.js';
import type { UserRow } from './users/store.js';
import type { FlowsService } from './flows/service.js';
import type { EmailOAuthServices } from './oauth/wiring.js';
import type { TwoFactorService } from './two-factor/service.js';
import type { VerificationService } from './verification/service.js';
import type { PasskeysService } from './passkeys/service.js';
import type { SelfService } from './dashboard/self.js';

/** What a login needs after the first factor passed: a session, or a second-step challenge. */
export type PrimaryLoginOutcome = { kind: 'challenge'; data: Record<string, unknown> } | null;

/**
 * Seams later features fill in: email codes (registration) and the second-factor branch of every login.
 * Each is optional; without it the feature behaves as if switched off.
 */
export interface AccountHooks {
  consumeEmailCode?: (purpose: string, email: string, code: string) => Promise<boolean>;
  /**
   * Tells the user by mail that how they sign in changed (password reset, second factor, passkey; ASVS
   * 6.3.7), after the change is committed. Set by the email module; never throws (a failed send is logged).
   */
  securityChanged?: (userId: number, reason: string) => Promise<void>;
  /** Returns a verification challenge when the user has a second factor, else null (log in directly). */
  secondFactor?: (user: UserRow, loginMethod: string) => Promise<PrimaryLoginOutcome>;
  /**
   * Checks and consumes a step-up security proof (header X-Security-Proof) for one SPEC scope
   * (AccountBind, AccountUnbind, TwoFASetup, ...) and the action's context; throws the 403 SECURITY_PROOF_*
   * codes. Set by the verification module. Callers use requireSecurityProof() from ./verification-seam.ts,
   * which fails closed when no verifier is installed.
   */
  verifySecurityProof?: (
    identity: AccountIdentity,
    scope: string,
    context: Record<string, unknown>,
    proofToken: string | undefined,
  ) => Promise<{ method: string; scope: string }>;
}

export interface AccountServices {
  users: UsersService;
  sessions: SessionsService;
  login: LoginService;
  flows: FlowsService;
  twoFactor: TwoFactorService;
  verification: VerificationService;
  passkeys: PasskeysService;
  /** Mail, email codes, password reset, OAuth, WeChat, Telegram and bindings. */
  emailOAuth: EmailOAuthServices;
  /** The caller's own profile, display name and password (what new-api's dashboard edits). */
  self: SelfService;
}

export interface AccountContext {
  config: Config;
  database: Database<AccountDB>;
  log: Logger;
  bus: Bus;
  limiter: RateLimiter;
  /** SESSION_SECRET (or the generated one kept in DATA_DIR). */
  secret: string;
  hooks: AccountHooks;
  services: AccountServices;
  /** Drops cached state of a user on every instance (role, status or auth version changed). */
  invalidateUser(userId: number): Promise<void>;
  /** Drops cached state of one session on every instance. */
  invalidateSession(sid: string): Promise<void>;
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
