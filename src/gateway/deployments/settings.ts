import { seal } from '../../kit/crypto/aead.js';
import type { GatewayContext } from '../context.js';
import { openSealed, sealingTransaction } from '../sealing.js';

const ENABLED = 'option:model_deployment.ionet.enabled';
const API_KEY = 'option:model_deployment.ionet.api_key';
const AAD = 'deployment.ionet.api_key';

export interface DeploymentSettings {
  enabled: boolean;
  /** The io.net API key, opened; null when none is stored. Never returned by an operation. */
  apiKey: string | null;
}

export async function readDeploymentSettings(ctx: GatewayContext): Promise<DeploymentSettings> {
  const rows = await ctx.db.selectFrom('gateway_meta').select(['key', 'value']).where('key', 'in', [ENABLED, API_KEY]).execute();
  const get = (k: string) => rows.find((r) => r.key === k)?.value;
  const sealed = get(API_KEY);
  return { enabled: get(ENABLED) === 'true', apiKey: sealed ? openSealed(ctx.secretKey, sealed, AAD) : null };
}

/** Stores the switch and/or the key (sealed like channel keys; an empty key removes it). */
export async function writeDeploymentSettings(ctx: GatewayContext, change: { enabled?: boolean; apiKey?: string }) {
  await sealingTransaction(ctx, async (trx) => {
    const put = async (key: string, value: string) => trx.insertInto('gateway_meta').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
    if (change.enabled !== undefined) await put(ENABLED, String(change.enabled));
    if (change.apiKey !== undefined) {
      if (change.apiKey) await put(API_KEY, seal(ctx.secretKey, change.apiKey, AAD));
      else await trx.deleteFrom('gateway_meta').where('key', '=', API_KEY).execute();
    }
  });
}
