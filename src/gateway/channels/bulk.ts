import { transactionWithRetry } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { sql } from 'kysely';
import { releaseLease, tryLease } from '../leases.js';
import { readOffThread } from '../../kit/db/read-thread.js';
import { abilityRows, ensureRoutingIndex, idChunks, lockable, rebuildAbilities, type Db } from './store.js';
import type { AbilityTable } from '../db.js';
import { groupText, normalizeJson, validateLength, validateLists } from './validate.js';
import { splitList } from './types.js';

export interface TagEdit {
  tag: string;
  new_tag?: string | null;
  priority?: number | null;
  weight?: number | null;
  model_mapping?: string | null;
  models?: string | null;
  groups?: string | null;
  param_override?: string | null;
  header_override?: string | null;
}

/** Channels per repair transaction: larger chunks give index inserts more locality, smaller ones hold row locks shorter. */
const FIX_CHUNK = 2000;

const ABILITY_COLUMNS = ['id', 'group', 'models', 'status', 'priority', 'weight', 'tag'] as const;

function jsonOrEmpty(field: string, v: string) {
  if (v.trim() === '') return;
  try {
    const parsed = JSON.parse(v);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return;
  } catch {
    /* fall through */
  }
  throw new AppError('CHANNEL_INVALID', { params: { detail: `${field} must be a JSON object` } });
}

/** Sets the same values on the given channels, one statement per id chunk. */
async function updateChannels(trx: Db, rows: { id: number }[], set: Record<string, unknown>) {
  for (const chunk of idChunks(rows)) await trx.updateTable('channels').set(set).where('id', 'in', chunk.map((r) => r.id)).execute();
}

/** Tag-wide edits and the abilities repair; each write rebuilds the abilities of the channels it touched. */
export class BulkService {
  constructor(private readonly ctx: GatewayContext) {}

  private async lockedIds(trx: Db, where: { ids?: number[]; tag?: string }) {
    let q = trx.selectFrom('channels').select(ABILITY_COLUMNS);
    if (where.ids) q = q.where('id', 'in', where.ids.length ? where.ids : [-1]);
    if (where.tag !== undefined) q = q.where('tag', '=', where.tag);
    if (lockable(this.ctx.database.dialect)) q = q.orderBy('id').forUpdate();
    return q.execute();
  }

  /** G13: sets (or clears with null/empty) the tag of the given channels. */
  async batchTag(actor: Actor, ids: number[], tag: string | null) {
    const value = tag?.trim() ? tag.trim() : null;
    return transactionWithRetry(this.ctx.db, async (trx) => {
      const rows = await this.lockedIds(trx, { ids: [...new Set(ids)] });
      await updateChannels(trx, rows, { tag: value });
      await rebuildAbilities(trx, rows.map((r) => ({ ...r, tag: value })));
      await audit(trx, actor, 'G13', null, { ids, tag: value, count: rows.length });
      return rows.length;
    });
  }

  /** G29: edits every channel of a tag. Empty model_mapping/models/groups strings are ignored. */
  async editTag(actor: Actor, e: TagEdit) {
    const tag = e.tag.trim();
    if (!tag) throw new AppError('CHANNEL_TAG_REQUIRED');
    for (const f of ['model_mapping', 'param_override', 'header_override'] as const) if (typeof e[f] === 'string') jsonOrEmpty(f, e[f]!);
    validateLists(e.models ?? undefined, e.groups ?? undefined);
    const newTag = e.new_tag?.trim();
    if (newTag) validateLength('tag', newTag);
    const set: Record<string, unknown> = {};
    if (newTag) set.tag = newTag;
    if (typeof e.priority === 'number') set.priority = e.priority;
    if (typeof e.weight === 'number') set.weight = e.weight;
    if (e.model_mapping?.trim()) set.model_mapping = e.model_mapping.trim();
    if (e.models?.trim()) set.models = e.models;
    if (e.groups?.trim()) set.group = groupText(e.groups);
    if (typeof e.param_override === 'string') set.param_override = normalizeJson(e.param_override);
    if (typeof e.header_override === 'string') set.header_override = normalizeJson(e.header_override);
    return transactionWithRetry(this.ctx.db, async (trx) => {
      const rows = await this.lockedIds(trx, { tag });
      if (Object.keys(set).length) await updateChannels(trx, rows, set);
      await rebuildAbilities(trx, rows.map((r) => ({ ...r, ...(set as object) })));
      await audit(trx, actor, 'G29', null, { tag, changed_fields: Object.keys(set), count: rows.length });
      return { tag: (set.tag as string) ?? tag, count: rows.length };
    });
  }

  async idsOfTag(tag: string): Promise<number[]> {
    return (await this.ctx.db.selectFrom('channels').select('id').where('tag', '=', tag).execute()).map((r) => Number(r.id));
  }

  /** G32: the models text of the tagged channel with the most models (the lowest id among equals; not a union, as the reference). */
  async tagModels(tag: string): Promise<string> {
    const rows = await this.ctx.db.selectFrom('channels').select('models').where('tag', '=', tag).orderBy('id').execute();
    let best = '';
    let count = -1;
    for (const r of rows) {
      const n = splitList(r.models).length;
      if (n > count) [best, count] = [r.models, n];
    }
    return best;
  }

  /**
   * G18: rebuilds the abilities index channel chunk by chunk (each chunk locked and rebuilt in its own
   * transaction, so concurrent channel writes stay consistent), then drops orphan rows. One run at a
   * time across instances: a lease row in gateway_meta. On SQLite, when the abilities table is empty (a
   * first build after an import), the routing index is dropped for the build and created at the end: an
   * empty table routes nothing anyway, and one index sort is far cheaper than 3 M random inserts.
   */
  async fix(actor: Actor) {
    const db = this.ctx.db;
    if (!(await tryLease(db, 'fix_lock', 1800))) throw new AppError('CHANNEL_FIX_RUNNING');
    let success = 0;
    let fails = 0;
    let rewritten = 0;
    const build = this.ctx.database.dialect === 'sqlite' && !(await db.selectFrom('abilities').select('channel_id').limit(1).executeTakeFirst());
    try {
      if (build) await sql`drop index if exists abilities_group_model_idx`.execute(db);
      let last = 0;
      for (;;) {
        // A chunk that loses a deadlock to a concurrent channel write runs again, so it only reports back.
        const chunk = await transactionWithRetry(db, async (trx) => {
          let q = trx.selectFrom('channels').select(ABILITY_COLUMNS).where('id', '>', last).orderBy('id').limit(FIX_CHUNK);
          if (lockable(this.ctx.database.dialect)) q = q.forUpdate();
          const rows = await q.execute();
          if (rows.length === 0) return { n: 0, last, rewritten: 0 };
          const first = Number(rows[0]!.id);
          const end = Number(rows[rows.length - 1]!.id);
          const channels = rows.map((r) => ({ ...r, id: Number(r.id) }));
          const existing = await trx.selectFrom('abilities').selectAll().where('channel_id', '>=', first).where('channel_id', '<=', end).execute();
          // Only channels whose rows differ from what they imply are rewritten, so a repair of a healthy
          // index is read-mostly.
          const byChannel = new Map<number, AbilityTable[]>();
          for (const a of existing) {
            const list = byChannel.get(Number(a.channel_id)) ?? [];
            list.push(a);
            byChannel.set(Number(a.channel_id), list);
          }
          const stale = channels.filter((c) => fingerprint(abilityRows(c)) !== fingerprint(byChannel.get(c.id) ?? []));
          await rebuildAbilities(trx, stale);
          return { n: rows.length, last: end, rewritten: stale.length };
        });
        if (chunk.n === 0) break;
        last = chunk.last;
        rewritten += chunk.rewritten;
        success += chunk.n;
      }
      const orphans = await this.removeOrphans();
      fails = 0;
      await audit(db, actor, 'G18', null, { success, rewritten, orphans_removed: orphans });
    } finally {
      if (build) await ensureRoutingIndex(db);
      await releaseLease(db, 'fix_lock');
    }
    return { success, fails };
  }

  /**
   * Deletes the abilities of channels that no longer exist; answers how many. The candidates are read
   * without locks, then each slice's channel ids are locked before its abilities are deleted: channels
   * first, as every channel write takes them. (One DELETE … WHERE channel_id NOT IN (SELECT id FROM
   * channels) on MySQL locks each abilities row it scans, then the channel row in share mode: the
   * opposite order, which deadlocked with a concurrent G03 and held the whole table meanwhile.)
   */
  private async removeOrphans(): Promise<number> {
    const db = this.ctx.db;
    const q = db.selectFrom('abilities').select('channel_id').distinct().where('channel_id', 'not in', (eb) => eb.selectFrom('channels').select('id'));
    const ids = (await readOffThread(db, q)).map((r) => Number(r.channel_id)).sort((a, b) => a - b);
    let removed = 0;
    for (const chunk of idChunks(ids)) {
      removed += await transactionWithRetry(db, async (trx) => {
        // A channel created since with one of these ids (an import keeps ids) keeps its abilities.
        const live = new Set((await this.lockedIds(trx, { ids: chunk })).map((r) => Number(r.id)));
        const gone = chunk.filter((id) => !live.has(id));
        if (gone.length === 0) return 0;
        return Number((await trx.deleteFrom('abilities').where('channel_id', 'in', gone).executeTakeFirst()).numDeletedRows);
      });
    }
    return removed;
  }
}

function fingerprint(rows: AbilityTable[]): string {
  return rows
    .map((a) => [a.group, a.model, Number(a.enabled), Number(a.priority), Number(a.weight), a.tag ?? ''].join('\u0000'))
    .sort()
    .join('\u0001');
}
