import crypto from 'node:crypto';
import type { Kysely, Migration } from 'kysely';
import { canonicalJson } from '../json/canonical.js';

/**
 * One row per source row brought in from another system: which local row it became, and a digest of each
 * field as it was read (sha256 prefixes, never values), so a later run changes only what changed there.
 */
export const importMapMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('import_map')
      .addColumn('source', 'varchar(32)', (c) => c.notNull())
      .addColumn('kind', 'varchar(64)', (c) => c.notNull())
      .addColumn('source_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('local_id', 'bigint', (c) => c.notNull())
      .addColumn('digest', 'text', (c) => c.notNull())
      .addColumn('imported_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('import_map_pk', ['source', 'kind', 'source_id'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('import_map').execute();
  },
};

export interface MapEntry {
  localId: number;
  digest: Record<string, string>;
}

/** Per-field digests: a field's value is never stored, only a 16-hex-digit sha256 prefix of it. */
export function fieldDigests(fields: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = crypto.createHash('sha256').update(canonicalJson(v ?? null)).digest('hex').slice(0, 16);
  return out;
}

/** Names of the fields whose digest differs (a field added or removed counts as changed). */
export function changedFields(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).sort();
}

export const importMap = {
  async get(db: Kysely<any>, source: string, kind: string, sourceId: string): Promise<MapEntry | undefined> {
    const r = await db
      .selectFrom('import_map')
      .select(['local_id', 'digest'])
      .where('source', '=', source)
      .where('kind', '=', kind)
      .where('source_id', '=', sourceId)
      .executeTakeFirst();
    return r ? { localId: Number(r.local_id), digest: JSON.parse(r.digest) } : undefined;
  },

  /** Local ids of every mapped row of a kind, by source id. */
  async all(db: Kysely<any>, source: string, kind: string): Promise<Map<string, number>> {
    const rows = await db.selectFrom('import_map').select(['source_id', 'local_id']).where('source', '=', source).where('kind', '=', kind).execute();
    return new Map(rows.map((r) => [String(r.source_id), Number(r.local_id)]));
  },

  async put(db: Kysely<any>, source: string, kind: string, sourceId: string, localId: number, digest: Record<string, string>, now: number, isNew: boolean) {
    const text = JSON.stringify(digest);
    if (isNew) {
      await db.insertInto('import_map').values({ source, kind, source_id: sourceId, local_id: localId, digest: text, imported_at: now, updated_at: now }).execute();
    } else {
      await db
        .updateTable('import_map')
        .set({ local_id: localId, digest: text, updated_at: now })
        .where('source', '=', source)
        .where('kind', '=', kind)
        .where('source_id', '=', sourceId)
        .execute();
    }
  },
};
