import type { Kysely } from 'kysely';
import { randomToken } from '../../kit/crypto/tokens.js';
import { nowSeconds, type GatewayDB, type PluginTaskStatus, type TaskPluginTaskTable } from '../db.js';

type Db = Kysely<GatewayDB>;

export const IN_FLIGHT: PluginTaskStatus[] = ['queued', 'running'];
export const SOURCES_OPTION = 'option:task_plugin_marketplace_sources';

export async function enabledRows(db: Db): Promise<Map<string, boolean>> {
  const rows = await db.selectFrom('task_plugins').select(['key', 'enabled']).execute();
  return new Map(rows.map((r) => [r.key, Number(r.enabled) === 1]));
}

export async function enabledRow(db: Db, key: string): Promise<boolean | undefined> {
  const row = await db.selectFrom('task_plugins').select('enabled').where('key', '=', key).executeTakeFirst();
  return row ? Number(row.enabled) === 1 : undefined;
}

export async function setEnabledRow(db: Db, key: string, enabled: boolean) {
  const values = { key, enabled: enabled ? 1 : 0, updated_at: nowSeconds() };
  await db
    .insertInto('task_plugins')
    .values(values)
    .onConflict((oc) => oc.column('key').doUpdateSet({ enabled: values.enabled, updated_at: values.updated_at }))
    .execute();
}

/** A fingerprint of the enable/disable rows (G77's database_revision). */
export async function stateRevision(db: Db): Promise<string> {
  const rows = await db.selectFrom('task_plugins').select(['key', 'enabled', 'updated_at']).orderBy('key').execute();
  return rows.map((r) => `${r.key}:${r.enabled}:${r.updated_at}`).join(',');
}

/** Channels whose setting JSON binds them to the plugin (`task_plugin_key`). */
export async function boundChannels(db: Db, key: string) {
  const rows = await db
    .selectFrom('channels')
    .select(['id', 'name', 'type', 'status', 'setting'])
    .where('setting', 'like', '%task_plugin_key%')
    .orderBy('id')
    .execute();
  return rows
    .filter((r) => {
      try {
        const s = JSON.parse(r.setting ?? '');
        return s && typeof s === 'object' && s.task_plugin_key === key;
      } catch {
        return false;
      }
    })
    .map((r) => ({ id: Number(r.id), name: r.name, type: Number(r.type), status: Number(r.status) }));
}

export async function inFlightCount(db: Db, key: string, version?: string): Promise<number> {
  let q = db.selectFrom('task_plugin_tasks').select((eb) => eb.fn.countAll().as('n')).where('plugin_key', '=', key).where('status', 'in', IN_FLIGHT);
  if (version !== undefined) q = q.where('plugin_version', '=', version);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** Tasks per version of a plugin: all, and those in flight. */
export async function versionTaskCounts(db: Db, key: string) {
  const rows = await db
    .selectFrom('task_plugin_tasks')
    .select(['plugin_version', 'status', (eb) => eb.fn.countAll().as('n')])
    .where('plugin_key', '=', key)
    .groupBy(['plugin_version', 'status'])
    .execute();
  const out = new Map<string, { tasks: number; in_flight: number }>();
  for (const r of rows) {
    const c = out.get(r.plugin_version) ?? { tasks: 0, in_flight: 0 };
    c.tasks += Number(r.n);
    if (IN_FLIGHT.includes(r.status)) c.in_flight += Number(r.n);
    out.set(r.plugin_version, c);
  }
  return out;
}

/**
 * Creates a queued task unless the owner already has `limit` tasks in flight. The owner's staff row is
 * locked first on PostgreSQL (SQLite runs one writer at a time), so concurrent requests cannot both pass.
 */
export async function createTaskWithinBudget(
  db: Db,
  lockRows: boolean,
  t: { plugin_key: string; plugin_version: string; owner_id: number; owner_name: string; input: string },
  limit: number,
): Promise<TaskPluginTaskTable | null> {
  return db.transaction().execute(async (trx) => {
    if (lockRows) await trx.selectFrom('staff').select('id').where('id', '=', t.owner_id).forUpdate().execute();
    const n = await trx
      .selectFrom('task_plugin_tasks')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('owner_id', '=', t.owner_id)
      .where('status', 'in', IN_FLIGHT)
      .executeTakeFirst();
    if (Number(n?.n ?? 0) >= limit) return null;
    const now = nowSeconds();
    const row = { ...t, task_id: 'task_' + randomToken(18), status: 'queued' as const, result: null, error: null, created_at: now, updated_at: now };
    await trx.insertInto('task_plugin_tasks').values(row as never).execute();
    return (await trx.selectFrom('task_plugin_tasks').selectAll().where('task_id', '=', row.task_id).executeTakeFirstOrThrow()) as TaskPluginTaskTable;
  });
}

export async function taskById(db: Db, taskId: string) {
  return db.selectFrom('task_plugin_tasks').selectAll().where('task_id', '=', taskId).executeTakeFirst();
}

export interface TaskFilter {
  plugin?: string;
  status?: PluginTaskStatus;
  owner?: string;
}

/** One page of tasks, newest first, and how many match. */
export async function taskPage(db: Db, f: TaskFilter, limit: number, offset: number) {
  let q = db.selectFrom('task_plugin_tasks');
  if (f.plugin) q = q.where('plugin_key', '=', f.plugin);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.owner) q = q.where('owner_name', '=', f.owner);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
  ]);
  return { rows: rows as TaskPluginTaskTable[], total: Number(count?.n ?? 0) };
}

/** Moves an in-flight task to `status`; false when it had already finished (nothing changes then). */
export async function updateInFlight(db: Db, taskId: string, status: PluginTaskStatus, result?: string | null, error?: string | null): Promise<boolean> {
  const set: Record<string, unknown> = { status, updated_at: nowSeconds() };
  if (result !== undefined) set.result = result;
  if (error !== undefined) set.error = error;
  const r = await db.updateTable('task_plugin_tasks').set(set).where('task_id', '=', taskId).where('status', 'in', IN_FLIGHT).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Fails the in-flight tasks of one plugin version (G74 with force); returns how many. */
export async function failInFlight(db: Db, key: string, version: string, error: string): Promise<number> {
  const r = await db
    .updateTable('task_plugin_tasks')
    .set({ status: 'failed', error, updated_at: nowSeconds() })
    .where('plugin_key', '=', key)
    .where('plugin_version', '=', version)
    .where('status', 'in', IN_FLIGHT)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function readOption(db: Db, key: string): Promise<string | undefined> {
  return (await db.selectFrom('gateway_meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

export async function writeOption(db: Db, key: string, value: string) {
  await db.insertInto('gateway_meta').values({ key, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}
