import { transactionWithRetry } from '../../kit/db/index.js';
import { seal } from '../../kit/crypto/aead.js';
import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { assertSealingKey, openSealed, sealingTransaction } from '../sealing.js';
import { addUsedQuota, deleteChannels, dormantAbilities, getChannel, idChunks, insertChannel, lockable, modelNames, rebuildAbilities, routableAbilities, type ChannelRow, type Db, type PublicChannel } from './store.js';
import { parseInfo, resizeInfo, splitKeys, STATUS, TYPE_VERTEX, withStatusReason, type ChannelInfo } from './types.js';
import { channelTarget, type UpstreamTarget } from '../upstream/target.js';
import { groupText, NOT_NULL_TEXT, WRITABLE_COLUMNS, normalizeJson, validateChannel, validateLength, validateLists, type ChannelInput } from './validate.js';

const KEY_AAD = 'channel.key';

/** The response view of a channel: never the key, never per-key disabled reasons or times. */
export function view(row: PublicChannel | ChannelRow) {
  const out = { ...row, key: '' } as Record<string, unknown>;
  out.channel_info = publicInfo(row.channel_info);
  return out as Omit<ChannelRow, 'channel_info'> & { channel_info: Partial<ChannelInfo> };
}

/** The channel_info a response shows: normalised, without per-key disabled reasons or times. */
export function publicInfo(text: string | null | undefined): Partial<ChannelInfo> {
  const info = parseInfo(text) as Partial<ChannelInfo>;
  delete info.multi_key_disabled_reason;
  delete info.multi_key_disabled_time;
  return info;
}

export interface CreateBody {
  mode: string;
  multi_key_mode?: string;
  batch_add_set_key_prefix_2_name?: boolean;
  channel: ChannelInput;
}

export class ChannelService {
  constructor(private readonly ctx: GatewayContext) {}

  seal(keyText: string) {
    return seal(this.ctx.secretKey, keyText, KEY_AAD);
  }

  openKey(sealed: string) {
    return openSealed(this.ctx.secretKey, sealed, KEY_AAD);
  }

  private tx<T>(fn: (trx: Db) => Promise<T>): Promise<T> {
    return transactionWithRetry(this.ctx.db, fn);
  }

  private lock() {
    return lockable(this.ctx.database.dialect);
  }

  async get(id: number) {
    const row = await getChannel(this.ctx.db, id);
    if (!row) throw new AppError('CHANNEL_NOT_FOUND');
    return view(row);
  }

  /** Builds the stored row of a new channel from the request (validated). */
  private newRow(input: ChannelInput, keyText: string, info: ChannelInfo): Omit<ChannelRow, 'id'> {
    const status = input.status ?? STATUS.enabled;
    if (status !== STATUS.enabled && status !== STATUS.manual) throw new AppError('CHANNEL_STATUS_INVALID');
    const row: Omit<ChannelRow, 'id'> = {
      type: input.type ?? 0,
      key: '',
      openai_organization: input.openai_organization ?? null,
      test_model: input.test_model ?? null,
      status,
      name: input.name ?? '',
      weight: input.weight ?? 0,
      created_time: nowSeconds(),
      test_time: 0,
      response_time: 0,
      base_url: input.base_url ?? '',
      other: input.other ?? '',
      balance: 0,
      balance_updated_time: 0,
      models: input.models ?? '',
      group: groupText(input.group),
      used_quota: 0,
      model_mapping: normalizeJson(input.model_mapping),
      status_code_mapping: normalizeJson(input.status_code_mapping),
      priority: input.priority ?? 0,
      auto_ban: input.auto_ban ?? 1,
      other_info: input.other_info ?? '',
      tag: input.tag?.trim() ? input.tag.trim() : null,
      setting: normalizeJson(input.setting),
      param_override: normalizeJson(input.param_override),
      header_override: normalizeJson(input.header_override),
      remark: input.remark ?? null,
      channel_info: JSON.stringify(info),
      settings: input.settings ?? '',
    };
    validateChannel(row, keyText);
    row.key = this.seal(keyText);
    return row;
  }

  /** G02: single, batch (one channel per key) or multi_to_single (one multi-key channel). */
  async create(actor: Actor, body: CreateBody, trx: Db): Promise<{ ids: number[]; count: number }> {
    await assertSealingKey(this.ctx, trx);
    const input = body.channel;
    const keyText = input.key ?? '';
    if (!keyText.trim()) throw new AppError('CHANNEL_INVALID', { params: { detail: 'key is required' } });
    const single = parseInfo('{}');
    const rows: Omit<ChannelRow, 'id'>[] = [];
    if (body.mode === 'single') {
      rows.push(this.newRow(input, keyText, single));
    } else if (body.mode === 'batch') {
      const keys = input.type === TYPE_VERTEX && keyText.trim().startsWith('[') ? splitKeys(keyText) : keyText.split('\n').filter((k) => k.trim() !== '');
      if (keys.length === 0) throw new AppError('CHANNEL_INVALID', { params: { detail: 'key is required' } });
      if (keys.length > 1000) throw new AppError('CHANNEL_INVALID', { params: { detail: 'at most 1000 keys per batch' } });
      for (const k of keys) {
        const name = body.batch_add_set_key_prefix_2_name && keys.length > 1 ? `${input.name ?? ''} ${k.slice(0, 8)}` : input.name;
        rows.push(this.newRow({ ...input, name }, k.trim(), single));
      }
    } else if (body.mode === 'multi_to_single') {
      const keys = splitKeys(keyText);
      if (keys.length === 0) throw new AppError('CHANNEL_INVALID', { params: { detail: 'key is required' } });
      const mode = body.multi_key_mode ?? 'random';
      if (mode !== 'random' && mode !== 'polling') throw new AppError('CHANNEL_INVALID', { params: { detail: 'multi_key_mode must be random or polling' } });
      const info: ChannelInfo = { ...single, is_multi_key: true, multi_key_size: keys.length, multi_key_mode: mode };
      rows.push(this.newRow(input, keys.join('\n'), info));
    } else {
      throw new AppError('CHANNEL_MODE_UNSUPPORTED');
    }
    const ids: number[] = [];
    for (const r of rows) {
      const id = await insertChannel(trx, r);
      ids.push(id);
      await rebuildAbilities(trx, [{ ...r, id }]);
    }
    await audit(trx, actor, 'G02', ids.length === 1 ? ids[0]! : null, { mode: body.mode, name: input.name ?? '', type: input.type ?? 0, count: ids.length, ids });
    return { ids, count: ids.length };
  }

  /** G03: overlay the request on the stored row; empty key keeps it; append/replace for multi-key. */
  async update(actor: Actor, input: ChannelInput & { key_mode?: string; multi_key_mode?: string }) {
    const id = input.id!;
    return sealingTransaction(this.ctx, async (trx) => {
      const stored = await getChannel(trx, id, this.lock());
      if (!stored) throw new AppError('CHANNEL_NOT_FOUND');
      if (input.status !== undefined && input.status !== stored.status) {
        throw new AppError('CHANNEL_INVALID', { params: { detail: 'status is changed with the status operations (G11, G28)' } });
      }
      const next: ChannelRow = { ...stored };
      const changed: string[] = [];
      for (let [field, value] of Object.entries(input)) {
        if (!WRITABLE_COLUMNS.has(field)) continue;
        if (value === undefined) continue;
        if (value === null && (field === 'model_mapping' || field === 'type')) continue;
        if (field === 'models' && value === '') continue;
        // These columns hold text, never NULL: a null sent for them clears them.
        if (value === null && NOT_NULL_TEXT.has(field)) value = '';
        (next as unknown as Record<string, unknown>)[field] = typeof value === 'string' && ['model_mapping', 'status_code_mapping', 'setting', 'param_override', 'header_override'].includes(field) ? normalizeJson(value) : value;
      }
      if (next.tag !== null) next.tag = next.tag.trim() || null;
      next.group = groupText(next.group);
      let info = parseInfo(stored.channel_info);
      const storedKeyText = this.openKey(stored.key);
      let keyText = storedKeyText;
      if (input.multi_key_mode !== undefined && info.is_multi_key) {
        if (input.multi_key_mode !== 'random' && input.multi_key_mode !== 'polling') {
          throw new AppError('CHANNEL_INVALID', { params: { detail: 'multi_key_mode must be random or polling' } });
        }
        info = { ...info, multi_key_mode: input.multi_key_mode };
      }
      if (input.key && input.key.trim()) {
        if (info.is_multi_key) {
          const incoming = [...new Set(splitKeys(input.key))];
          // Append keeps the stored list as it is (its per-key states are by position) and adds only new keys.
          const current = splitKeys(keyText);
          const keys = input.key_mode === 'append' ? [...current, ...incoming.filter((k) => !current.includes(k))] : incoming;
          if (keys.length === 0) throw new AppError('CHANNEL_INVALID', { params: { detail: 'key is required' } });
          keyText = keys.join('\n');
          info = resizeInfo(info, keys.length);
        } else {
          keyText = input.key.trim();
        }
        if (keyText !== storedKeyText) changed.push('key');
      }
      validateChannel(next, keyText);
      next.key = changed.includes('key') ? this.seal(keyText) : stored.key;
      next.channel_info = JSON.stringify(info);
      for (const k of Object.keys(next) as (keyof ChannelRow)[]) {
        if (k !== 'key' && k !== 'channel_info' && next[k] !== stored[k]) changed.push(k);
      }
      if (next.channel_info !== stored.channel_info) changed.push('channel_info');
      const { id: _id, ...values } = next;
      await trx.updateTable('channels').set(values).where('id', '=', id).execute();
      await rebuildAbilities(trx, [next]);
      await audit(trx, actor, 'G03', id, { name: next.name, changed_fields: changed });
      return { ...view(next), changed_fields: changed };
    });
  }

  async remove(actor: Actor, id: number) {
    return this.tx(async (trx) => {
      const row = await getChannel(trx, id, this.lock());
      if (!row) throw new AppError('CHANNEL_NOT_FOUND');
      await deleteChannels(trx, [id], this.lock());
      await audit(trx, actor, 'G04', id, { name: row.name });
      return { id, name: row.name };
    });
  }

  async removeMany(actor: Actor, ids: number[]) {
    return this.tx(async (trx) => {
      const n = await deleteChannels(trx, ids, this.lock());
      await audit(trx, actor, 'G12', null, { ids, count: n });
      return n;
    });
  }

  async removeDisabled(actor: Actor) {
    return this.tx(async (trx) => {
      const ids = (await trx.selectFrom('channels').select('id').where('status', 'in', [STATUS.manual, STATUS.auto]).execute()).map((r) => Number(r.id));
      const n = await deleteChannels(trx, ids, this.lock(), [STATUS.manual, STATUS.auto]);
      await audit(trx, actor, 'G15', null, { ids, count: n });
      return n;
    });
  }

  /**
   * G11/G28/G30/G31: sets status 1 or 2 on channels; returns how many changed. Rows are read and locked
   * one id chunk at a time in id order; rows whose other_info was the same get the same new one, so a
   * tag of many channels takes a few statements per chunk instead of two per channel.
   */
  async setStatus(actor: Actor, operation: string, ids: number[], status: number, detail: Record<string, unknown> = {}, reason = 'manual operation') {
    if (status !== STATUS.enabled && status !== STATUS.manual) throw new AppError('CHANNEL_STATUS_INVALID');
    return this.tx(async (trx) => {
      let changed = 0;
      const now = nowSeconds();
      const sorted = [...new Set(ids)].sort((a, b) => a - b);
      for (const chunk of idChunks(sorted)) {
        let q = trx.selectFrom('channels').select(['id', 'other_info']).where('id', 'in', chunk).where('status', '!=', status).orderBy('id');
        if (this.lock()) q = q.forUpdate();
        const rows = await q.execute();
        const byInfo = new Map<string, number[]>();
        for (const row of rows) {
          const info = withStatusReason(row.other_info, reason, now);
          const group = byInfo.get(info);
          if (group) group.push(Number(row.id));
          else byInfo.set(info, [Number(row.id)]);
        }
        for (const [info, group] of byInfo) await trx.updateTable('channels').set({ status, other_info: info }).where('id', 'in', group).execute();
        if (rows.length) await trx.updateTable('abilities').set({ enabled: status === STATUS.enabled ? 1 : 0 }).where('channel_id', 'in', rows.map((r) => r.id)).execute();
        changed += rows.length;
      }
      await audit(trx, actor, operation, ids.length === 1 ? ids[0]! : null, { ...detail, ids, status, changed });
      return changed;
    });
  }

  /** G14: clones a channel, key and multi-key state included. */
  async copy(actor: Actor, id: number, suffix: string, resetBalance: boolean, trx: Db) {
    await assertSealingKey(this.ctx, trx);
    const src = await getChannel(trx, id);
    if (!src) throw new AppError('CHANNEL_NOT_FOUND');
    const { id: _id, ...rest } = src;
    const clone = { ...rest, name: src.name + suffix, created_time: nowSeconds(), test_time: 0, response_time: 0 };
    validateLength('name', clone.name);
    if (resetBalance) Object.assign(clone, { balance: 0, used_quota: 0 });
    const newId = await insertChannel(trx, clone);
    await rebuildAbilities(trx, [{ ...clone, id: newId }]);
    await audit(trx, actor, 'G14', newId, { source_id: id, name: clone.name });
    return { id: newId, name: clone.name, sourceId: id };
  }

  /**
   * What an upstream call needs for a stored channel, its key opened (multi-key: `keyIndex`, else the first
   * enabled key). Stays inside the gateway: the target's key never goes into a response.
   */
  async target(id: number, keyIndex?: number): Promise<UpstreamTarget> {
    const row = await getChannel(this.ctx.db, id);
    if (!row) throw new AppError('CHANNEL_NOT_FOUND');
    return channelTarget(row, this.openKey(row.key), keyIndex);
  }

  /** The relay's candidates for a (group, model): enabled abilities with their priority and weight. */
  routes(group: string, model: string) {
    return routableAbilities(this.ctx.db, group, model);
  }

  /** Channels of a (group, model) that the system disabled, with their other_info (the breaker's candidates). */
  dormantRoutes(group: string, model: string) {
    return dormantAbilities(this.ctx.db, group, model);
  }

  /** A channel row with its key opened, for the relay (which keeps the key inside the gateway). */
  async openRow(id: number): Promise<{ row: ChannelRow; keyText: string } | null> {
    const row = await getChannel(this.ctx.db, id);
    return row ? { row, keyText: this.openKey(row.key) } : null;
  }

  /** Adds what relayed calls cost to each channel's used_quota. */
  async addUsedQuota(deltas: Map<number, number>) {
    if (deltas.size) await this.ctx.db.transaction().execute((trx) => addUsedQuota(trx, deltas));
  }

  /** G10: the full key text; the caller has consumed a proof. */
  async revealKey(actor: Actor, id: number) {
    const row = await getChannel(this.ctx.db, id);
    if (!row) throw new AppError('CHANNEL_NOT_FOUND');
    await audit(this.ctx.db, actor, 'G10', id, { name: row.name });
    return { id, name: row.name, key: this.openKey(row.key) };
  }

  async models(enabledOnly: boolean): Promise<string[]> {
    return modelNames(this.ctx.db, enabledOnly);
  }

  /**
   * Rewrites one channel's `models` and `settings` under its row lock (upstream model updates, G37–G40):
   * `change` sees the stored row (without its key) and returns the new texts. Models are checked as G03
   * checks them (the 100,000-abilities cap included) and the abilities rebuilt when they changed, all in one
   * transaction; audited when `change` returns a detail.
   */
  async rewriteModels<T>(
    actor: Actor,
    operation: string,
    id: number,
    change: (row: PublicChannel) => { models: string; settings: string; audit: Record<string, unknown> | null; result: T },
  ): Promise<T> {
    return this.tx(async (trx) => {
      const row = await getChannel(trx, id, this.lock());
      if (!row) throw new AppError('CHANNEL_NOT_FOUND');
      const { key: _key, ...stored } = row;
      const next = change(stored);
      const modelsChanged = next.models !== row.models;
      if (modelsChanged) validateLists(next.models, row.group);
      if (modelsChanged || next.settings !== row.settings) {
        await trx.updateTable('channels').set({ models: next.models, settings: next.settings }).where('id', '=', id).execute();
      }
      if (modelsChanged) await rebuildAbilities(trx, [{ ...row, models: next.models }]);
      if (next.audit) await audit(trx, actor, operation, id, next.audit);
      return next.result;
    });
  }

  /**
   * Replaces a channel's key with `keyText` (sealed) when its stored key is still `expected` (so a
   * concurrent G03 key change is never overwritten); answers whether it was replaced. Audited.
   */
  async replaceKey(actor: Actor, operation: string, id: number, expected: string, keyText: string, detail: Record<string, unknown>): Promise<boolean> {
    return sealingTransaction(this.ctx, async (trx) => {
      const row = await getChannel(trx, id, this.lock());
      if (!row || this.openKey(row.key) !== expected) return false;
      await trx.updateTable('channels').set({ key: this.seal(keyText) }).where('id', '=', id).execute();
      await audit(trx, actor, operation, id, { name: row.name, ...detail });
      return true;
    });
  }
}
