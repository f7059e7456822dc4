import type { FastifyRequest } from 'fastify';
import type { AccountIdentity } from './context.js';
import type { VerificationService } from './verification/service.js';

/** What a route needs to demand a step-up proof: the verification service's check. */
export type ProofVerifier = Pick<VerificationService, 'verifyProof'>;

/**
 * Requires a step-up security proof for `scope` (SPEC name: AccountBind, AccountUnbind, TwoFASetup, ...)
 * bound to `context`, taken from the X-Security-Proof header; checks and consumes it, or throws the 403
 * SECURITY_PROOF_* codes. Without the header, a recent sign-in counts for the scopes that add a factor, and
 * `sent.code` (the request's TOTP code) for the scopes of CODE_PROOF_SCOPES (verification/scopes.ts).
 */
export async function requireSecurityProof(
  verifier: ProofVerifier,
  req: FastifyRequest,
  identity: AccountIdentity,
  scope: string,
  context: Record<string, unknown> = {},
  sent: { code?: string } = {},
) {
  const header = req.headers['x-security-proof'];
  const token = typeof header === 'string' && header.trim() ? header.trim() : undefined;
  return verifier.verifyProof(identity, scope, context, token, sent);
}
