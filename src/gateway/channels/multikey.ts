import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { assertSealingKey } from '../sealing.js';
import type { ChannelService } from './service.js';
import { getChannel, lockable } from './store.js';
import { parseInfo, splitKeys, STATUS, type ChannelInfo } from './types.js';

export interface MultiKeyRequest {
  channel_id: number;
  action: string;
  key_index?: number;
  page?: number;
  page_size?: number;
  status?: number;
}

export const MULTI_KEY_ACTIONS = ['get_key_status', 'disable_key', 'enable_key', 'enable_all_keys', 'disable_all_keys', 'delete_key', 'delete_disabled_keys'];
export const DELETING_ACTIONS = new Set(['delete_key', 'delete_disabled_keys']);

/**
 * A preview that tells keys apart without showing enough to use one: the first and last 4 characters of a
 * key of 16 or more (8 of usually 40–160), the first 4 of a shorter one.
 */
function preview(key: string) {
  if (key.length <= 4) return '*'.repeat(key.length);
  return key.length >= 16 ? `${key.slice(0, 4)}...${key.slice(-4)}` : key.slice(0, 4) + '...';
}

/** Removes the given indexes and renumbers the per-key maps of the remaining keys. */
function removeIndexes(keys: string[], info: ChannelInfo, drop: Set<number>): { keys: string[]; info: ChannelInfo } {
  const next: string[] = [];
  const status: Record<string, number> = {};
  const reason: Record<string, string> = {};
  const time: Record<string, number> = {};
  keys.forEach((k, i) => {
    if (drop.has(i)) return;
    const j = next.length;
    next.push(k);
    if (info.multi_key_status_list[i] !== undefined) status[j] = info.multi_key_status_list[i]!;
    if (info.multi_key_disabled_reason[i] !== undefined) reason[j] = info.multi_key_disabled_reason[i]!;
    if (info.multi_key_disabled_time[i] !== undefined) time[j] = info.multi_key_disabled_time[i]!;
  });
  return {
    keys: next,
    info: { ...info, multi_key_size: next.length, multi_key_status_list: status, multi_key_disabled_reason: reason, multi_key_disabled_time: time, multi_key_polling_index: 0 },
  };
}

/** G21: per-key state of a multi-key channel, under the channel's row lock. */
export async function manageMultiKey(ctx: GatewayContext, channels: ChannelService, actor: Actor, r: MultiKeyRequest) {
  if (!MULTI_KEY_ACTIONS.includes(r.action)) throw new AppError('CHANNEL_ACTION_UNSUPPORTED');
  return ctx.db.transaction().execute(async (trx) => {
    if (DELETING_ACTIONS.has(r.action)) await assertSealingKey(ctx, trx);
    const row = await getChannel(trx, r.channel_id, lockable(ctx.database.dialect));
    if (!row) throw new AppError('CHANNEL_NOT_FOUND');
    let info = parseInfo(row.channel_info);
    if (!info.is_multi_key) throw new AppError('CHANNEL_NOT_MULTI_KEY');
    let keys = splitKeys(channels.openKey(row.key));
    const statusOf = (i: number) => info.multi_key_status_list[i] ?? STATUS.enabled;
    const index = () => {
      const i = r.key_index;
      if (i === undefined || i < 0 || i >= keys.length) throw new AppError('CHANNEL_KEY_INDEX_OUT_OF_RANGE');
      return i;
    };

    if (r.action === 'get_key_status') {
      const all = keys.map((k, i) => ({
        index: i,
        status: statusOf(i),
        ...(info.multi_key_disabled_time[i] ? { disabled_time: info.multi_key_disabled_time[i] } : {}),
        ...(info.multi_key_disabled_reason[i] ? { reason: info.multi_key_disabled_reason[i] } : {}),
        key_preview: preview(k),
      }));
      const filtered = r.status ? all.filter((k) => k.status === r.status) : all;
      const pageSize = Math.min(500, Math.max(1, r.page_size ?? 50));
      const totalPages = Math.max(1, Math.ceil(filtered.length / pageSize));
      const page = Math.min(Math.max(1, r.page ?? 1), totalPages);
      return {
        message: '',
        data: {
          keys: filtered.slice((page - 1) * pageSize, page * pageSize),
          total: filtered.length,
          page,
          page_size: pageSize,
          total_pages: totalPages,
          enabled_count: all.filter((k) => k.status === STATUS.enabled).length,
          manual_disabled_count: all.filter((k) => k.status === STATUS.manual).length,
          auto_disabled_count: all.filter((k) => k.status === STATUS.auto).length,
        },
      };
    }

    let message = '';
    let count = 0;
    const maps = { ...info, multi_key_status_list: { ...info.multi_key_status_list }, multi_key_disabled_reason: { ...info.multi_key_disabled_reason }, multi_key_disabled_time: { ...info.multi_key_disabled_time } };
    const clear = (i: number) => {
      delete maps.multi_key_status_list[i];
      delete maps.multi_key_disabled_reason[i];
      delete maps.multi_key_disabled_time[i];
    };
    const disable = (i: number) => {
      maps.multi_key_status_list[i] = STATUS.manual;
      maps.multi_key_disabled_reason[i] = 'manual operation';
      maps.multi_key_disabled_time[i] = nowSeconds();
    };
    switch (r.action) {
      case 'disable_key':
        disable(index());
        count = 1;
        message = 'key disabled';
        break;
      case 'enable_key':
        clear(index());
        count = 1;
        message = 'key enabled';
        break;
      case 'enable_all_keys':
        count = Object.keys(maps.multi_key_status_list).length;
        for (let i = 0; i < keys.length; i++) clear(i);
        message = `enabled ${count} keys`;
        break;
      case 'disable_all_keys':
        for (let i = 0; i < keys.length; i++) if (statusOf(i) === STATUS.enabled) (disable(i), count++);
        if (count === 0) throw new AppError('CHANNEL_NO_KEY_TO_DISABLE');
        message = `disabled ${count} keys`;
        break;
      case 'delete_key': {
        const i = index();
        if (keys.length <= 1) throw new AppError('CHANNEL_LAST_KEY');
        ({ keys, info: info } = removeIndexes(keys, maps, new Set([i])));
        count = 1;
        message = 'key deleted';
        break;
      }
      case 'delete_disabled_keys': {
        const drop = new Set(keys.map((_, i) => i).filter((i) => statusOf(i) === STATUS.auto));
        if (drop.size === 0) throw new AppError('CHANNEL_NO_DISABLED_KEY');
        if (drop.size === keys.length) throw new AppError('CHANNEL_LAST_KEY');
        ({ keys, info: info } = removeIndexes(keys, maps, drop));
        count = drop.size;
        message = `deleted ${count} keys`;
        break;
      }
    }
    const finalInfo = DELETING_ACTIONS.has(r.action) ? info : maps;
    const set: Record<string, string> = { channel_info: JSON.stringify(finalInfo) };
    if (DELETING_ACTIONS.has(r.action)) set.key = channels.seal(keys.join('\n'));
    await trx.updateTable('channels').set(set).where('id', '=', r.channel_id).execute();
    await audit(trx, actor, 'G21', r.channel_id, { action: r.action, key_index: r.key_index ?? null, count });
    return { message, data: { action: r.action, id: r.channel_id, count, multi_key_size: keys.length } };
  });
}
