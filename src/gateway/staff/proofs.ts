import { randomToken, sha256 } from '../../kit/crypto/tokens.js';
import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';

export const KEY_READ_SCOPE = 'channel.key.read';
/** Secrets shown once and other staff-sensitive writes (edge developer keys, webhook signing secrets, staff administration): bound to no channel (channel id 0). */
export const STAFF_SECRET_SCOPE = 'StaffSecret';

/** Single-use security proofs: bound to one staff member, one scope and one channel. */
export class ProofService {
  constructor(private readonly ctx: GatewayContext) {}

  async issue(staffId: number, scope: string, channelId: number) {
    const token = randomToken(32);
    const expiresAt = nowSeconds() + this.ctx.config.securityProofTtlSeconds;
    await this.ctx.db.insertInto('security_proofs').values({ token_hash: sha256(token), staff_id: staffId, scope, channel_id: channelId, expires_at: expiresAt, used_at: null }).execute();
    return { proof_token: token, expires_at: expiresAt };
  }

  /** Consumes a proof atomically: one UPDATE that only matches an unused, unexpired, matching proof. */
  async consume(token: string | undefined, staffId: number, scope: string, channelId: number) {
    if (!token) throw new AppError('GW_PROOF_REQUIRED');
    const now = nowSeconds();
    const r = await this.ctx.db
      .updateTable('security_proofs')
      .set({ used_at: now })
      .where('token_hash', '=', sha256(token))
      .where('staff_id', '=', staffId)
      .where('scope', '=', scope)
      .where('channel_id', '=', channelId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new AppError('GW_PROOF_INVALID');
    await this.ctx.db.deleteFrom('security_proofs').where('expires_at', '<', now - 86400).execute();
  }
}
