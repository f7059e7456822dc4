import type { Kysely, Migration } from 'kysely';
import { textDefault, type DialectName } from '../../kit/db/index.js';

/** Short-lived, purpose-bound flows (OAuth state, login verification, passkey ceremonies, proofs...). */
export function flows(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('auth_flows')
        .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('purpose', 'varchar(32)', (c) => c.notNull())
        .addColumn('user_id', 'bigint')
        .addColumn('session_id', 'varchar(36)')
        .addColumn('provider', 'varchar(64)')
        .addColumn('intent', 'varchar(16)')
        .addColumn('payload', 'text', (c) => c.notNull().defaultTo(textDefault(dialect, '{}')))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .execute();
      await db.schema.createIndex('auth_flows_expires').on('auth_flows').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('auth_flows').execute();
    },
  };
}
