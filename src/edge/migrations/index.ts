import { sql, type Kysely, type Migration } from 'kysely';
import { idPrimaryKey, idType, type DialectName } from '../../kit/db/index.js';
import { importMapMigration } from '../../kit/db/import-map.js';

/** Edge migrations, applied in name order at start (own bookkeeping tables edge_migrations*). */
export function edgeMigrations(dialect: DialectName): Record<string, Migration> {
  const id = idType(dialect) as 'integer';
  const pk = idPrimaryKey(dialect);
  return {
    '0001_identities': {
      async up(db: Kysely<any>) {
        await db.schema.createTable('edge_meta').addColumn('key', 'varchar(128)', (c) => c.primaryKey()).addColumn('value', 'text', (c) => c.notNull()).execute();
        await db.schema
          .createTable('edge_owners')
          .addColumn('id', id, pk)
          .addColumn('name', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('edge_keys')
          .addColumn('key_id', 'varchar(22)', (c) => c.primaryKey())
          .addColumn('owner_id', 'bigint', (c) => c.notNull().references('edge_owners.id'))
          .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('revoked_at', 'bigint')
          .execute();
      },
    },
    '0002_admission': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('edge_wallets')
          .addColumn('owner_id', 'bigint', (c) => c.primaryKey().references('edge_owners.id'))
          .addColumn('wallet_id', 'varchar(36)', (c) => c.notNull().unique())
          .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('reserved', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('revision', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addCheckConstraint('edge_wallets_reserved_le_balance', sql`reserved >= 0 and reserved <= balance`)
          .execute();
        await db.schema
          .createTable('edge_models')
          .addColumn('public_model_id', 'varchar(128)', (c) => c.primaryKey())
          .addColumn('reserve_amount', 'bigint', (c) => c.notNull())
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('edge_runs')
          .addColumn('run_id', 'varchar(36)', (c) => c.primaryKey())
          .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
          .addColumn('owner_id', 'bigint', (c) => c.notNull().references('edge_owners.id'))
          .addColumn('key_id', 'varchar(22)', (c) => c.notNull())
          .addColumn('public_model_id', 'varchar(128)', (c) => c.notNull())
          .addColumn('input', 'text', (c) => c.notNull())
          .addColumn('api_version', 'varchar(8)', (c) => c.notNull())
          .addColumn('reserved_amount', 'bigint', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('revision', 'bigint', (c) => c.notNull())
          .addColumn('traceparent', 'varchar(55)')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('edge_idempotency')
          .addColumn('owner_id', 'bigint', (c) => c.notNull())
          .addColumn('key', 'varchar(255)', (c) => c.notNull())
          .addColumn('body_hash', 'varchar(64)', (c) => c.notNull())
          .addColumn('response', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('edge_idempotency_pk', ['owner_id', 'key'])
          .execute();
        await db.schema.createIndex('edge_idempotency_created').on('edge_idempotency').column('created_at').execute();
      },
    },
    '0003_outbox': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('edge_outbox')
          .addColumn('sequence', id, pk)
          .addColumn('event_id', 'varchar(36)', (c) => c.notNull().unique())
          .addColumn('type', 'varchar(64)', (c) => c.notNull())
          .addColumn('aggregate_id', 'varchar(64)', (c) => c.notNull())
          .addColumn('aggregate_revision', 'bigint', (c) => c.notNull())
          .addColumn('owner_id', 'bigint', (c) => c.notNull())
          .addColumn('payload', 'text', (c) => c.notNull())
          .addColumn('traceparent', 'varchar(55)')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addUniqueConstraint('edge_outbox_aggregate_revision', ['aggregate_id', 'aggregate_revision'])
          .execute();
        await db.schema
          .createTable('edge_webhooks')
          .addColumn('id', id, pk)
          .addColumn('endpoint_id', 'varchar(36)', (c) => c.notNull().unique())
          .addColumn('owner_id', 'bigint', (c) => c.notNull().references('edge_owners.id'))
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('removed_at', 'bigint')
          .execute();
        await db.schema
          .createTable('edge_deliveries')
          .addColumn('id', id, pk)
          .addColumn('event_id', 'varchar(36)', (c) => c.notNull())
          .addColumn('endpoint_id', 'varchar(36)', (c) => c.notNull())
          .addColumn('status', 'varchar(16)', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('lease_owner', 'varchar(64)')
          .addColumn('lease_until', 'bigint')
          .addColumn('last_error', 'text')
          .addColumn('delivered_at', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addUniqueConstraint('edge_deliveries_event_endpoint', ['event_id', 'endpoint_id'])
          .execute();
        await db.schema.createIndex('edge_deliveries_due').on('edge_deliveries').columns(['status', 'next_attempt_at']).execute();
        await db.schema
          .createTable('edge_delivery_attempts')
          .addColumn('id', id, pk)
          .addColumn('delivery_id', 'bigint', (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('dispatcher', 'varchar(64)', (c) => c.notNull())
          .addColumn('status_code', 'integer')
          .addColumn('error', 'text')
          .addColumn('started_at', 'bigint', (c) => c.notNull())
          .addColumn('finished_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('edge_delivery_attempts_delivery').on('edge_delivery_attempts').column('delivery_id').execute();
      },
    },
    '0004_runs': {
      async up(db: Kysely<any>) {
        // Where a public model is served (the gateway's model name and channel group) and how far a call may
        // cost more than it reserved (taken from the available balance, never below zero).
        await db.schema.alterTable('edge_models').addColumn('gateway_model', 'varchar(255)').execute();
        await db.schema.alterTable('edge_models').addColumn('group_name', 'varchar(64)', (c) => c.notNull().defaultTo('default')).execute();
        await db.schema.alterTable('edge_models').addColumn('overdraft', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        const run = (name: string, type: string, build?: (c: any) => any) => db.schema.alterTable('edge_runs').addColumn(name, type as 'text', build).execute();
        // 'async' (admitted by E01, executed by a worker) or 'sync' (an OpenAI-compatible call answered at once).
        await run('kind', 'varchar(8)', (c) => c.notNull().defaultTo('async'));
        await run('format', 'varchar(16)', (c) => c.notNull().defaultTo('responses'));
        await run('lease_owner', 'varchar(64)');
        await run('lease_until', 'bigint');
        await run('attempts', 'integer', (c) => c.notNull().defaultTo(0));
        await run('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0));
        await run('output', 'text');
        await run('prompt_tokens', 'bigint', (c) => c.notNull().defaultTo(0));
        await run('completion_tokens', 'bigint', (c) => c.notNull().defaultTo(0));
        await run('cost', 'bigint', (c) => c.notNull().defaultTo(0));
        await run('error_code', 'varchar(64)');
        await run('error_message', 'text');
        await run('started_at', 'bigint');
        await run('finished_at', 'bigint');
        // Past it a run that has not ended is the reconciliation's (ms since the epoch).
        await run('deadline_at', 'bigint', (c) => c.notNull().defaultTo(0));
        await db.schema.createIndex('edge_runs_status_deadline').on('edge_runs').columns(['status', 'deadline_at']).execute();
        await db.schema.createIndex('edge_runs_owner_request').on('edge_runs').columns(['owner_id', 'request_id']).execute();
        await db.schema.createIndex('edge_runs_owner_finished').on('edge_runs').columns(['owner_id', 'finished_at']).execute();
        // One row per settled run: the primary key makes settlement happen once, whoever tries it.
        await db.schema
          .createTable('edge_settlements')
          .addColumn('run_id', 'varchar(36)', (c) => c.primaryKey())
          .addColumn('owner_id', 'bigint', (c) => c.notNull())
          .addColumn('reserved', 'bigint', (c) => c.notNull())
          .addColumn('charged', 'bigint', (c) => c.notNull())
          .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
          .addColumn('source', 'varchar(16)', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0005_credits_audit': {
      async up(db: Kysely<any>) {
        // One row per wallet credit, written in the credit's transaction: a credit id (the console's
        // Idempotency-Key, the CLI's --idempotency-key) credits once; a retry answers the stored wallet.
        await db.schema
          .createTable('edge_credits')
          .addColumn('credit_id', 'varchar(320)', (c) => c.primaryKey())
          .addColumn('owner_id', 'bigint', (c) => c.notNull())
          .addColumn('amount', 'bigint', (c) => c.notNull())
          .addColumn('wallet', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        // Every change of money, prices, keys and webhooks, whoever made it (CLI or console), in its transaction.
        await db.schema
          .createTable('edge_audit')
          .addColumn('id', id, pk)
          .addColumn('actor', 'varchar(80)', (c) => c.notNull())
          .addColumn('operation', 'varchar(32)', (c) => c.notNull())
          .addColumn('detail', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0006_customers': {
      async up(db: Kysely<any>) {
        // An account user's API token (new-api's tokens): one developer key (edge_keys) with the customer's
        // limits. The key itself is never stored; `pending_key` holds it sealed until its one showing.
        await db.schema
          .createTable('edge_tokens')
          .addColumn('id', id, pk)
          .addColumn('key_id', 'varchar(22)', (c) => c.notNull().unique())
          .addColumn('owner_id', 'bigint', (c) => c.notNull().references('edge_owners.id'))
          .addColumn('name', 'varchar(64)', (c) => c.notNull())
          .addColumn('key_hint', 'varchar(32)', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('expired_time', 'bigint', (c) => c.notNull().defaultTo(-1))
          .addColumn('remain_quota', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('unlimited_quota', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('model_limits_enabled', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('model_limits', 'text', (c) => c.notNull())
          .addColumn('allow_ips', 'text', (c) => c.notNull())
          .addColumn('group_name', 'varchar(64)', (c) => c.notNull().defaultTo(''))
          .addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('accessed_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_time', 'bigint', (c) => c.notNull())
          .addColumn('pending_key', 'text')
          .addColumn('pending_until', 'bigint')
          .addColumn('deleted_at', 'bigint')
          .execute();
        await db.schema.createIndex('edge_tokens_owner').on('edge_tokens').columns(['owner_id', 'id']).execute();
        // Top-up codes (new-api's redemptions): only the SHA-256 of a code is kept; a code credits once.
        await db.schema
          .createTable('edge_redemptions')
          .addColumn('id', id, pk)
          .addColumn('name', 'varchar(64)', (c) => c.notNull())
          .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
          .addColumn('key_hint', 'varchar(32)', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('quota', 'bigint', (c) => c.notNull())
          .addColumn('created_time', 'bigint', (c) => c.notNull())
          .addColumn('redeemed_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('used_owner_id', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('expired_time', 'bigint', (c) => c.notNull().defaultTo(0))
          .addColumn('created_by', 'varchar(80)', (c) => c.notNull())
          .addColumn('deleted_at', 'bigint')
          .execute();
        await db.schema.createIndex('edge_redemptions_owner').on('edge_redemptions').columns(['used_owner_id', 'redeemed_time']).execute();
        // The usage log's columns: which token made the call (its name then), and whether it streamed.
        const run = (name: string, type: string, build?: (c: any) => any) => db.schema.alterTable('edge_runs').addColumn(name, type as 'text', build).execute();
        await run('token_id', 'bigint', (c) => c.notNull().defaultTo(0));
        await run('token_name', 'varchar(64)', (c) => c.notNull().defaultTo(''));
        await run('stream', 'integer', (c) => c.notNull().defaultTo(0));
        await db.schema.createIndex('edge_runs_finished').on('edge_runs').column('finished_at').execute();
        // new-api's used_quota and request_count of a user, kept with the wallet by each settlement.
        await db.schema.alterTable('edge_wallets').addColumn('used_quota', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('edge_wallets').addColumn('request_count', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        // What a credit was (credit, topup, adjust, signup, import) and why: the usage log's top-up and manage rows.
        await db.schema.alterTable('edge_credits').addColumn('kind', 'varchar(16)', (c) => c.notNull().defaultTo('credit')).execute();
        await db.schema.alterTable('edge_credits').addColumn('reason', 'varchar(255)', (c) => c.notNull().defaultTo('')).execute();
        await db.schema.createIndex('edge_credits_owner').on('edge_credits').columns(['owner_id', 'created_at']).execute();
      },
    },
    '0007_owner_suspension': {
      async up(db: Kysely<any>) {
        // An owner whose account user is disabled: every key of it is refused while set (the tokens' own
        // statuses are left as their user set them, so enabling the user again restores exactly those).
        await db.schema.alterTable('edge_owners').addColumn('suspended_at', 'bigint').execute();
      },
    },
    '0008_key_changes': {
      async up(db: Kysely<any>) {
        // The counter of changes to existing key rows (EdgeKeyChangesTable): one row, bumped by every writer.
        await db.schema.createTable('edge_key_changes').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('changes', 'bigint', (c) => c.notNull()).execute();
        await db.insertInto('edge_key_changes').values({ id: 1, changes: 0 }).execute();
      },
    },
    // Which wallets, tokens, codes and log rows came from which rows of another system (`import new-api`);
    // numbered apart from the rest, as in the other databases.
    '0900_import_map': importMapMigration,
  };
}
