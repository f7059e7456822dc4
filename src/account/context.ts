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
import type { FlowsService } from './flows/service.js';
import type { Mailer } from '../kit/mail/index.js';
import type { EmailService } from './email/service.js';
import type { EmailBindingService } from './email/binding.js';
import type { ResetService } from './reset/service.js';
import type { BindingsService } from './bindings/service.js';
import type { OAuthService } from './oauth/service.js';
import type { WeChatService } from './oauth/wechat.js';
import type { TelegramService } from './oauth/telegram.js';
import type { TwoFactorService } from './two-factor/service.js';
import type { VerificationService } from './verification/service.js';
import type { PasskeysService } from './passkeys/service.js';
import type { SelfService } from './dashboard/self.js';

/** Seams the routes still reach through the context (until they are given their services). */
export interface AccountHooks {
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
  emailOAuth: {
    mailer: Mailer;
    email: EmailService;
    reset: ResetService;
    emailBinding: EmailBindingService;
    bindings: BindingsService;
    oauth: OAuthService;
    wechat: WeChatService;
    telegram: TelegramService;
  };
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
