import type { Kysely, Migration } from 'kysely';

export const BINDING_COLUMNS = ['github_id', 'discord_id', 'oidc_id', 'linux_do_id', 'wechat_id', 'telegram_id'] as const;

/** Provider identity columns on users, custom-provider bindings, email codes and used Telegram assertions. */
export const emailOAuth: Migration = {
  async up(db: Kysely<any>) {
    for (const col of BINDING_COLUMNS) {
      await db.schema.alterTable('users').addColumn(col, 'varchar(128)').execute();
      await db.schema.createIndex(`users_${col}_unique`).on('users').column(col).unique().execute();
    }
    await db.schema
      .createTable('user_oauth_bindings')
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('provider_slug', 'varchar(64)', (c) => c.notNull())
      .addColumn('provider_user_id', 'varchar(256)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('user_oauth_bindings_pk', ['user_id', 'provider_slug'])
      .addUniqueConstraint('user_oauth_bindings_identity', ['provider_slug', 'provider_user_id'])
      .execute();
    await db.schema
      .createTable('email_codes')
      .addColumn('purpose', 'varchar(16)', (c) => c.notNull())
      .addColumn('email', 'varchar(254)', (c) => c.notNull())
      .addColumn('code_hash', 'varchar(64)', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('email_codes_pk', ['purpose', 'email'])
      .execute();
    await db.schema
      .createTable('telegram_assertions')
      .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('telegram_assertions').execute();
    await db.schema.dropTable('email_codes').execute();
    await db.schema.dropTable('user_oauth_bindings').execute();
    for (const col of BINDING_COLUMNS) {
      await db.schema.dropIndex(`users_${col}_unique`).execute();
      await db.schema.alterTable('users').dropColumn(col).execute();
    }
  },
};
