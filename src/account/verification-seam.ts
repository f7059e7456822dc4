import type { FastifyRequest } from 'fastify';
import { AppError } from '../kit/http/errors.js';
import { accountOf, type AccountIdentity } from './context.js';

/**
 * Requires a step-up security proof for `scope` (SPEC name) bound to `context`, taken from the
 * X-Security-Proof header. Fails closed with 403 SECURITY_PROOF_REQUIRED when no verifier is installed.
 */
export async function requireSecurityProof(
  req: FastifyRequest,
  identity: AccountIdentity,
  scope: string,
  context: Record<string, unknown> = {},
) {
  const verify = accountOf(req).hooks.verifySecurityProof;
  const header = req.headers['x-security-proof'];
  const token = typeof header === 'string' && header.trim() ? header.trim() : undefined;
  if (!verify) throw new AppError('SECURITY_PROOF_REQUIRED');
  return verify(identity, scope, context, token);
}
