import type { Kysely, Migration } from 'kysely';
import { idPrimaryKey, idType, type DialectName } from '../../kit/db/index.js';

/** Users, login sessions and key/value options. */
export function core(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', idType(dialect) as 'integer', idPrimaryKey(dialect))
        .addColumn('username', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('display_name', 'varchar(64)', (c) => c.notNull().defaultTo(''))
        .addColumn('email', 'varchar(254)', (c) => c.unique())
        .addColumn('password_hash', 'text')
        .addColumn('role', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('group', 'varchar(64)', (c) => c.notNull().defaultTo('default'))
        .addColumn('aff_code', 'varchar(32)', (c) => c.notNull().unique())
        .addColumn('inviter_id', 'bigint')
        .addColumn('auth_version', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('access_token_hash', 'varchar(64)', (c) => c.unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .execute();

      await db.schema
        .createTable('user_sessions')
        .addColumn('sid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('user_auth_version', 'integer', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('refresh_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('previous_refresh_hash', 'varchar(64)')
        .addColumn('previous_valid_until', 'bigint')
        .addColumn('login_method', 'varchar(64)', (c) => c.notNull())
        .addColumn('ip', 'varchar(64)', (c) => c.notNull().defaultTo(''))
        .addColumn('user_agent', 'varchar(512)', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_active_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .addColumn('revoked_reason', 'varchar(64)')
        .execute();
      await db.schema.createIndex('user_sessions_user_status').on('user_sessions').columns(['user_id', 'status']).execute();
      await db.schema.createIndex('user_sessions_user_created').on('user_sessions').columns(['user_id', 'created_at']).execute();

      await db.schema
        .createTable('account_options')
        .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('account_options').execute();
      await db.schema.dropTable('user_sessions').execute();
      await db.schema.dropTable('users').execute();
    },
  };
}
