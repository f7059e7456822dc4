import { sql, type Kysely, type Migration } from 'kysely';
import { doubleType, idPrimaryKey, idType, textDefault, uniqueWhereNull, type DialectName } from '../../kit/db/index.js';
import { importMapMigration } from '../../kit/db/import-map.js';

/** Gateway migrations, applied in name order at start. */
export function gatewayMigrations(dialect: DialectName): Record<string, Migration> {
  const id = idType(dialect);
  const pk = idPrimaryKey(dialect);
  const real = doubleType(dialect);
  const text = (value: string) => textDefault(dialect, value);
  return {
    '0001_meta': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('gateway_meta')
          .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
      },
    },
    '0002_staff': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('staff')
          .addColumn('id', id as 'integer', pk)
          .addColumn('name', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('kind', 'varchar(16)', (c) => c.notNull())
          .addColumn('role', 'varchar(16)', (c) => c.notNull())
          .addColumn('totp_secret', 'text')
          .addColumn('totp_last_step', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('staff_permissions')
          .addColumn('staff_id', 'bigint', (c) => c.notNull().references('staff.id').onDelete('cascade'))
          .addColumn('permission', 'varchar(64)', (c) => c.notNull())
          .addColumn('effect', 'varchar(8)', (c) => c.notNull())
          .addPrimaryKeyConstraint('staff_permissions_pk', ['staff_id', 'permission'])
          .execute();
        await db.schema
          .createTable('staff_tokens')
          .addColumn('id', id as 'integer', pk)
          .addColumn('staff_id', 'bigint', (c) => c.notNull().references('staff.id').onDelete('cascade'))
          .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint')
          .addColumn('revoked_at', 'bigint')
          .execute();
        await db.schema
          .createTable('security_proofs')
          .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
          .addColumn('staff_id', 'bigint', (c) => c.notNull())
          .addColumn('scope', 'varchar(64)', (c) => c.notNull())
          .addColumn('channel_id', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .addColumn('used_at', 'bigint')
          .execute();
      },
    },
    '0003_channels': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('channels')
          .addColumn('id', id as 'integer', pk)
          .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('openai_organization', 'text')
          .addColumn('test_model', 'text')
          .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('name', 'varchar(255)', (c) => c.notNull().defaultTo(''))
          .addColumn('weight', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_time', 'bigint', (c) => c.notNull())
          .addColumn('test_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('response_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('base_url', 'text', (c) => c.notNull().defaultTo(text('')))
          .addColumn('other', 'text', (c) => c.notNull().defaultTo(text('')))
          .addColumn('balance', real, (c) => c.notNull().defaultTo(0))
          .addColumn('balance_updated_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('models', 'text', (c) => c.notNull().defaultTo(text('')))
          .addColumn('group', 'varchar(255)', (c) => c.notNull().defaultTo('default'))
          .addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('model_mapping', 'text')
          .addColumn('status_code_mapping', 'text')
          .addColumn('priority', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('auto_ban', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('other_info', 'text', (c) => c.notNull().defaultTo(text('')))
          .addColumn('tag', 'varchar(255)')
          .addColumn('setting', 'text')
          .addColumn('param_override', 'text')
          .addColumn('header_override', 'text')
          .addColumn('remark', 'varchar(255)')
          .addColumn('channel_info', 'text', (c) => c.notNull().defaultTo(text('{}')))
          .addColumn('settings', 'text', (c) => c.notNull().defaultTo(text('')))
          .execute();
        for (const col of ['name', 'tag', 'status', 'type', 'priority']) {
          await db.schema.createIndex(`channels_${col}_idx`).on('channels').column(col).execute();
        }
        await db.schema
          .createTable('abilities')
          .addColumn('group', 'varchar(64)', (c) => c.notNull())
          .addColumn('model', 'varchar(255)', (c) => c.notNull())
          .addColumn('channel_id', 'bigint', (c) => c.notNull())
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('priority', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('weight', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('tag', 'varchar(255)')
          // Keyed by channel first: every write replaces one channel's rows (a key-prefix range), and a
          // rebuild appends in channel order. Routing looks rows up by (group, model) through the index.
          .addPrimaryKeyConstraint('abilities_pk', ['channel_id', 'group', 'model'])
          .execute();
        await db.schema.createIndex('abilities_group_model_idx').on('abilities').columns(['group', 'model', 'enabled', 'priority']).execute();
      },
    },
    '0004_audit_idempotency_prefill': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('gateway_audit')
          .addColumn('id', id as 'integer', pk)
          .addColumn('actor_id', 'bigint', (c) => c.notNull())
          .addColumn('actor_name', 'varchar(64)', (c) => c.notNull())
          .addColumn('operation', 'varchar(16)', (c) => c.notNull())
          .addColumn('channel_id', 'bigint')
          .addColumn('detail', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('idempotency_keys')
          .addColumn('actor_id', 'bigint', (c) => c.notNull())
          .addColumn('operation', 'varchar(16)', (c) => c.notNull())
          .addColumn('key', 'varchar(255)', (c) => c.notNull())
          .addColumn('body_hash', 'varchar(64)', (c) => c.notNull())
          .addColumn('response', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pk', ['actor_id', 'operation', 'key'])
          .execute();
        await db.schema
          .createTable('prefill_groups')
          .addColumn('id', id as 'integer', pk)
          .addColumn('name', 'varchar(64)', (c) => c.notNull())
          .addColumn('type', 'varchar(32)', (c) => c.notNull())
          .addColumn('items', 'text', (c) => c.notNull())
          .addColumn('description', 'varchar(255)', (c) => c.notNull().defaultTo(''))
          .addColumn('created_time', 'bigint', (c) => c.notNull())
          .addColumn('updated_time', 'bigint', (c) => c.notNull())
          .addColumn('deleted_at', 'bigint')
          .execute();
        // Unique among live rows only (soft delete keeps old names around).
        await uniqueWhereNull(db, 'prefill_groups_name_live', 'prefill_groups', 'name', 'deleted_at', 'varchar(64)');
      },
    },
    '0005_list_indexes': {
      async up(db: Kysely<any>) {
        // G01's default order (priority desc, id desc) and id order walk an index instead of sorting.
        await db.schema.createIndex('channels_priority_id_idx').on('channels').columns(['priority', 'id']).execute();
        await db.schema.createIndex('channels_status_type_idx').on('channels').columns(['status', 'type']).execute();
      },
    },
    '0006_keyword_index': {
      async up(db: Kysely<any>) {
        // MySQL: no index; its LIKE '%…%' scans (docs/differences.md).
        if (dialect === 'sqlite') await sqliteKeywordIndex(db);
        if (dialect === 'postgres') await postgresKeywordIndex(db);
      },
    },
    '0007_keyword_vocab': {
      async up(db: Kysely<any>) {
        // How many channels hold each trigram: G27 narrows by the keyword's rarest trigrams (see keyword.ts).
        if (dialect === 'sqlite') await sql`create virtual table channels_fts_vocab using fts5vocab(channels_fts, 'row')`.execute(db);
      },
    },
    '0008_ordered_keyword_index': {
      async up(db: Kysely<any>) {
        if (dialect === 'sqlite') await sqliteOrderedKeywordIndex(db);
      },
    },
    '0009_trigram_pending_limit': {
      async up(db: Kysely<any>) {
        if (dialect === 'postgres') await limitTrigramPendingLists(db);
      },
    },
    '0010_staff_disabled': {
      async up(db: Kysely<any>) {
        // `staff disable` sets it: a disabled identity cannot authenticate or get tokens.
        await db.schema.alterTable('staff').addColumn('disabled_at', 'bigint').execute();
      },
    },
    '0011_trimmed_groups': {
      async up(db: Kysely<any>) {
        // Groups are now stored trimmed, without empty or repeated entries (as the abilities index reads
        // them), so the list's group filter matches every channel serving a group; older rows follow.
        const rows = await db.selectFrom('channels').select(['id', 'group'])
          .where((eb) => eb.or(['% %', '%,,%', ',%', '%,', ''].map((p) => eb('group', 'like', p)))).execute();
        for (const r of rows) {
          const groups = [...new Set(String(r.group).split(',').map((g) => g.trim()).filter(Boolean))];
          const text = groups.length ? groups.join(',') : 'default';
          if (text !== r.group) await db.updateTable('channels').set({ group: text }).where('id', '=', r.id).execute();
        }
      },
    },
    '0012_jobs': {
      async up(db: Kysely<any>) {
        // Background jobs (G33 channel tests, G40 model-update detection): progress readable from any
        // instance; `active` is 1 while running and NULL after, and a unique index on (type, active) lets
        // one job of a type be active at a time across every instance sharing the database (NULLs never
        // collide, on SQLite, PostgreSQL and MySQL alike).
        await db.schema
          .createTable('gateway_jobs')
          .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
          .addColumn('type', 'varchar(32)', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('active', 'integer')
          .addColumn('params', 'text', (c) => c.notNull())
          .addColumn('progress', 'text', (c) => c.notNull())
          .addColumn('result', 'text')
          .addColumn('error', 'text')
          .addColumn('created_by', 'bigint', (c) => c.notNull())
          .addColumn('created_by_name', 'varchar(64)', (c) => c.notNull())
          .addColumn('runner', 'varchar(64)', (c) => c.notNull())
          .addColumn('lease_until', 'bigint', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addColumn('finished_at', 'bigint')
          .execute();
        await db.schema.createIndex('gateway_jobs_one_active').unique().on('gateway_jobs').columns(['type', 'active']).execute();
        await db.schema.createIndex('gateway_jobs_type_created').on('gateway_jobs').columns(['type', 'created_at']).execute();
      },
    },
    '0014_task_plugins': {
      async up(db: Kysely<any>) {
        // Enable/disable state per plugin key (no row: the layer's default, see src/gateway/plugins/).
        await db.schema
          .createTable('task_plugins')
          .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('task_plugin_tasks')
          .addColumn('id', id as 'integer', pk)
          .addColumn('task_id', 'varchar(48)', (c) => c.notNull().unique())
          .addColumn('plugin_key', 'varchar(64)', (c) => c.notNull())
          .addColumn('plugin_version', 'varchar(64)', (c) => c.notNull())
          .addColumn('owner_id', 'bigint', (c) => c.notNull())
          .addColumn('owner_name', 'varchar(64)', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('input', 'text', (c) => c.notNull())
          .addColumn('result', 'text')
          .addColumn('error', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('task_plugin_tasks_owner_status_idx').on('task_plugin_tasks').columns(['owner_id', 'status']).execute();
        await db.schema.createIndex('task_plugin_tasks_plugin_status_idx').on('task_plugin_tasks').columns(['plugin_key', 'status', 'plugin_version']).execute();
      },
    },
    '0015_relay_log': {
      async up(db: Kysely<any>) {
        // One row per relay call; `attempts` is the JSON list of channels tried, in order, with each outcome.
        await db.schema
          .createTable('relay_log')
          .addColumn('id', id as 'integer', pk)
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
          .addColumn('caller', 'varchar(192)', (c) => c.notNull())
          .addColumn('caller_group', 'varchar(64)', (c) => c.notNull())
          .addColumn('format', 'varchar(16)', (c) => c.notNull())
          .addColumn('stream', 'integer', (c) => c.notNull())
          .addColumn('model', 'varchar(255)', (c) => c.notNull())
          .addColumn('upstream_model', 'varchar(255)', (c) => c.notNull())
          .addColumn('channel_id', 'bigint')
          .addColumn('key_index', 'integer')
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('error_code', 'varchar(64)')
          .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
          .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
          .addColumn('cached_tokens', 'bigint', (c) => c.notNull())
          .addColumn('reasoning_tokens', 'bigint', (c) => c.notNull())
          .addColumn('quota', 'bigint', (c) => c.notNull())
          .addColumn('cost', real, (c) => c.notNull())
          .addColumn('first_byte_ms', 'integer')
          .addColumn('total_ms', 'integer', (c) => c.notNull())
          .addColumn('retries', 'integer', (c) => c.notNull())
          .addColumn('attempts', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('relay_log_time_idx').on('relay_log').columns(['created_at']).execute();
        await db.schema.createIndex('relay_log_model_idx').on('relay_log').columns(['model', 'created_at']).execute();
        await db.schema.createIndex('relay_log_channel_idx').on('relay_log').columns(['channel_id', 'created_at']).execute();
      },
    },
    '0016_relay_log_details': {
      async up(db: Kysely<any>) {
        // Whether the row's usage was counted with the tokenizer (none, or none believable, came), and what
        // went wrong in the words staff need (the caller is told less: addresses and settings stay here).
        await db.schema.alterTable('relay_log').addColumn('usage_counted', 'integer', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('relay_log').addColumn('error_detail', 'text').execute();
      },
    },
    // Which channels came from which rows of another system (`import new-api`); numbered apart from the rest.
    '0900_import_map': importMapMigration,
  };
}

/**
 * Replaces the trigram index of 0006 by one whose rowids follow G01/G27's default order: rowid =
 * priority × 2^32 + id (priority clamped to ±2^30, so the key fits 64 bits; ids must stay below 2^32), so
 * a search in that order reads the index's matches from the top and stops after its page instead of
 * reading, checking and sorting every match. The channel id is the rowid's low 32 bits. Contentless
 * (the text lives in channels only); `contentless_delete` lets the triggers delete by rowid.
 */
async function sqliteOrderedKeywordIndex(db: Kysely<any>) {
  for (const name of ['channels_fts_insert', 'channels_fts_delete', 'channels_fts_update']) await sql`drop trigger ${sql.id(name)}`.execute(db);
  await sql`drop table channels_fts_vocab`.execute(db);
  await sql`drop table channels_fts`.execute(db);
  await sql`create virtual table channels_fts using fts5(name, base_url, tag, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
  const key = (row: string) => sql.raw(`max(-1073741824, min(1073741823, ${row}.priority)) * 4294967296 + ${row}.id`);
  const tooLarge = sql`select raise(abort, 'channel ids above 4294967295 are not supported') where new.id > 4294967295;`;
  await sql`create trigger channels_fts_insert after insert on channels begin
    ${tooLarge}
    insert into channels_fts(rowid, name, base_url, tag) values (${key('new')}, new.name, new.base_url, new.tag);
  end`.execute(db);
  await sql`create trigger channels_fts_delete after delete on channels begin
    delete from channels_fts where rowid = ${key('old')};
  end`.execute(db);
  await sql`create trigger channels_fts_update after update of id, name, base_url, tag, priority on channels begin
    ${tooLarge}
    delete from channels_fts where rowid = ${key('old')};
    insert into channels_fts(rowid, name, base_url, tag) values (${key('new')}, new.name, new.base_url, new.tag);
  end`.execute(db);
  const [big] = (await sql<{ id: number }>`select id from channels where id > 4294967295 limit 1`.execute(db)).rows;
  if (big) throw new Error(`gateway migration 0008: channel id ${big.id} is above 4294967295, which the search index does not support`);
  await sql`insert into channels_fts(rowid, name, base_url, tag) select ${key('channels')}, name, base_url, tag from channels`.execute(db);
  await sql`create virtual table channels_fts_vocab using fts5vocab(channels_fts, 'row')`.execute(db);
}

/**
 * G27 keyword search: a trigram full-text index over name, base_url and tag (FTS5 `trigram`, external
 * content), kept in sync by triggers in the same transaction as every channel write. It only narrows the
 * candidates; the search still applies its LIKE conditions, so results are exactly those of the scan.
 */
async function sqliteKeywordIndex(db: Kysely<any>) {
  await sql`create virtual table channels_fts using fts5(name, base_url, tag, content='channels', content_rowid='id', tokenize='trigram')`.execute(db);
  await sql`create trigger channels_fts_insert after insert on channels begin
    insert into channels_fts(rowid, name, base_url, tag) values (new.id, new.name, new.base_url, new.tag);
  end`.execute(db);
  await sql`create trigger channels_fts_delete after delete on channels begin
    insert into channels_fts(channels_fts, rowid, name, base_url, tag) values ('delete', old.id, old.name, old.base_url, old.tag);
  end`.execute(db);
  await sql`create trigger channels_fts_update after update of name, base_url, tag on channels begin
    insert into channels_fts(channels_fts, rowid, name, base_url, tag) values ('delete', old.id, old.name, old.base_url, old.tag);
    insert into channels_fts(rowid, name, base_url, tag) values (new.id, new.name, new.base_url, new.tag);
  end`.execute(db);
  await sql`insert into channels_fts(channels_fts) values ('rebuild')`.execute(db);
}

/** Bytes of unmerged entries a GIN trigram index may hold (kB); PostgreSQL's default is 4 MB. */
export const TRIGRAM_PENDING_LIST_KB = 256;

/**
 * PostgreSQL: new entries of a GIN index wait in a pending list until it reaches gin_pending_list_limit or
 * a vacuum merges them, and every search reads the whole list. With the default 4 MB, a search after a
 * bulk import spent ~15 ms per index reading lists of entries that did not match (100k channels; a few
 * µs once merged), and autovacuum may not come for a long time on a table that is only inserted into.
 * 256 kB bounds that read; a 1,000-row insert costs ~80 ms instead of ~50 (fastupdate off: ~330).
 */
async function limitTrigramPendingLists(db: Kysely<any>) {
  for (const index of ['channels_name_trgm', 'channels_base_url_trgm', 'channels_tag_trgm']) {
    const found = await sql`select 1 from pg_class where relname = ${index} and relnamespace = current_schema()::regnamespace`.execute(db);
    if (found.rows.length) await sql`alter index ${sql.id(index)} set (gin_pending_list_limit = ${sql.lit(TRIGRAM_PENDING_LIST_KB)})`.execute(db);
  }
}

/**
 * PostgreSQL: pg_trgm GIN indexes on the lower()ed columns the search compares, when the extension can be
 * created (or already exists); otherwise the search keeps scanning (recorded in gateway_meta).
 */
async function postgresKeywordIndex(db: Kysely<any>) {
  // Extensions are database-wide: prefer public, so dropping a deployment's own schema never drops the
  // extension (and with it the indexes of other schemas); else wherever the role may create it.
  for (const create of [sql`create extension if not exists pg_trgm with schema public`, sql`create extension if not exists pg_trgm`]) {
    await sql`savepoint keyword_index`.execute(db);
    try {
      await create.execute(db);
      break;
    } catch {
      await sql`rollback to savepoint keyword_index`.execute(db);
    }
  }
  const ext = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = ext.rows[0]?.schema;
  if (!schema) return;
  const ops = sql`${sql.id(schema)}.gin_trgm_ops`;
  await sql`create index channels_name_trgm on channels using gin (lower(name) ${ops})`.execute(db);
  await sql`create index channels_base_url_trgm on channels using gin (lower(base_url) ${ops})`.execute(db);
  await sql`create index channels_tag_trgm on channels using gin (lower(coalesce(tag, '')) ${ops})`.execute(db);
}
