import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { getChannel, lockable } from './store.js';
import { parseInfo, STATUS, withStatusReason } from './types.js';

export const ALL_KEYS_DISABLED = 'All keys are disabled';

/**
 * The system's own status changes (status 3 is never set by a person): `disable` moves an enabled channel
 * (or one key of a multi-key channel) to auto-disabled with a reason; enable moves an auto-disabled channel
 * (or key) back, never one disabled by hand (status 2). A multi-key channel goes to status 3 when its last
 * enabled key is disabled ("All keys are disabled") and back to 1 when a key recovers. Abilities follow the
 * channel's status. Answers whether anything changed; each change is audited under `operation`.
 */
export async function setAutoStatus(
  ctx: GatewayContext,
  actor: Actor,
  operation: string,
  change: { channelId: number; disable: boolean; reason: string; keyIndex?: number | null },
): Promise<boolean> {
  const changed = await ctx.db.transaction().execute(async (trx) => {
    const row = await getChannel(trx, change.channelId, lockable(ctx.database.dialect));
    if (!row) return false;
    const now = nowSeconds();
    const info = parseInfo(row.channel_info);
    let status = row.status;
    let reason = change.reason;
    let channelInfo = row.channel_info;
    if (info.is_multi_key && change.keyIndex !== undefined && change.keyIndex !== null) {
      const i = String(change.keyIndex);
      const keyStatus = info.multi_key_status_list[i] ?? STATUS.enabled;
      if (change.disable ? keyStatus !== STATUS.enabled : keyStatus !== STATUS.auto) return false;
      if (change.disable) {
        info.multi_key_status_list[i] = STATUS.auto;
        info.multi_key_disabled_reason[i] = change.reason;
        info.multi_key_disabled_time[i] = now;
      } else {
        delete info.multi_key_status_list[i];
        delete info.multi_key_disabled_reason[i];
        delete info.multi_key_disabled_time[i];
      }
      channelInfo = JSON.stringify(info);
      const enabledKeys = info.multi_key_size - Object.values(info.multi_key_status_list).filter((s) => s !== STATUS.enabled).length;
      if (change.disable && enabledKeys <= 0 && status === STATUS.enabled) {
        status = STATUS.auto;
        reason = ALL_KEYS_DISABLED;
      } else if (!change.disable && status === STATUS.auto) {
        status = STATUS.enabled;
      }
    } else {
      if (change.disable ? status !== STATUS.enabled : status !== STATUS.auto) return false;
      status = change.disable ? STATUS.auto : STATUS.enabled;
    }
    const otherInfo = status !== row.status ? withStatusReason(row.other_info, reason, now) : row.other_info;
    await trx.updateTable('channels').set({ status, channel_info: channelInfo, other_info: otherInfo }).where('id', '=', row.id).execute();
    if (status !== row.status) await trx.updateTable('abilities').set({ enabled: status === STATUS.enabled ? 1 : 0 }).where('channel_id', '=', row.id).execute();
    await audit(trx, actor, operation, row.id, {
      action: change.disable ? 'auto_disable' : 'auto_enable',
      reason: change.reason,
      ...(change.keyIndex !== undefined && change.keyIndex !== null ? { key_index: change.keyIndex } : {}),
      status,
    });
    return true;
  });
  if (changed) ctx.metrics.channelsChanged();
  return changed;
}

/** Saves the time of successful tests: response_time (ms) and test_time, many channels per transaction. */
export async function recordTestTimes(ctx: GatewayContext, results: { id: number; ms: number }[]) {
  if (!results.length) return;
  const now = nowSeconds();
  await ctx.db.transaction().execute(async (trx) => {
    for (const r of results) await trx.updateTable('channels').set({ response_time: r.ms, test_time: now }).where('id', '=', r.id).execute();
  });
}

/** Saves a balance read from the upstream, with the time it was read. */
export async function recordBalance(ctx: GatewayContext, id: number, balance: number) {
  await ctx.db.updateTable('channels').set({ balance, balance_updated_time: nowSeconds() }).where('id', '=', id).execute();
}
