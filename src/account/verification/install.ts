import { principalBucket } from '../../contract/buckets.js';
import type { AccountContext } from '../context.js';
import { createTwoFactorService } from '../two-factor/service.js';
import { createVerificationService } from './service.js';
import { createPasskeysService } from '../passkeys/service.js';

/** Wires the second factor: its services, the login challenge and the security-proof verifier. */
export function installSecondFactor(ctx: AccountContext) {
  ctx.services.twoFactor = createTwoFactorService(ctx);
  ctx.services.verification = createVerificationService(ctx);
  ctx.services.passkeys = createPasskeysService(ctx);
  ctx.hooks.secondFactor = (user, loginMethod) => ctx.services.verification.loginChallenge(user, loginMethod);
  ctx.hooks.verifySecurityProof = (identity, scope, context, token) => ctx.services.verification.verifyProof(identity, scope, context, token);
}

/** The per-user bucket of step-up and second-factor routes (one account, many IPs). */
export function securityBucket(ctx: AccountContext) {
  const c = ctx.config;
  return principalBucket(ctx.limiter, 'security', c.securityRateLimit, c.securityRateLimitDuration, (req) =>
    req.accountIdentity ? String(req.accountIdentity.userId) : null,
  );
}
