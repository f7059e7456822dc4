import type { Kysely, Migration } from 'kysely';

/** TOTP second factor (one row per enrolled user), its backup codes, and passkey credentials. */
export const secondFactor: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('two_factor')
      .addColumn('user_id', 'bigint', (c) => c.primaryKey())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('two_factor_backup_codes')
      .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('two_factor_backup_codes_user').on('two_factor_backup_codes').column('user_id').execute();
    await db.schema
      .createTable('passkey_credentials')
      .addColumn('user_id', 'bigint', (c) => c.primaryKey())
      .addColumn('credential_id', 'varchar(1024)', (c) => c.notNull().unique())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('rp_id', 'varchar(255)', (c) => c.notNull())
      .addColumn('transports', 'varchar(255)', (c) => c.notNull().defaultTo(''))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('passkey_credentials').execute();
    await db.schema.dropTable('two_factor_backup_codes').execute();
    await db.schema.dropTable('two_factor').execute();
  },
};
