import { sql, type Kysely } from 'kysely';
import { openDatabase, type Database, type DialectName } from '../../src/kit/db/index.js';

/**
 * A database shaped as new-api's GORM models make it (snake_case plural tables, the reference's column
 * names and types), on SQLite, PostgreSQL or MySQL, for the import tests.
 */
export function newApiDdl(dialect: DialectName): string[] {
  const pk = { sqlite: 'integer PRIMARY KEY AUTOINCREMENT', postgres: 'bigserial PRIMARY KEY', mysql: 'bigint AUTO_INCREMENT PRIMARY KEY' }[dialect];
  const bool = dialect === 'sqlite' ? 'numeric' : 'boolean';
  const time = { sqlite: 'datetime', postgres: 'timestamptz', mysql: 'datetime(3)' }[dialect];
  const json = dialect === 'sqlite' ? 'JSON' : 'json';
  const q = (s: string) => (dialect === 'postgres' ? `"${s}"` : `\`${s}\``);
  // GORM on MySQL makes an indexed string without a size varchar(191); the others keep text.
  const indexedText = dialect === 'mysql' ? 'varchar(191)' : 'text';
  return [
    `CREATE TABLE users (id ${pk}, username ${indexedText} UNIQUE, password text NOT NULL, display_name text, role bigint DEFAULT 1,
      status bigint DEFAULT 1, email text, github_id text, discord_id text, oidc_id text, wechat_id text, telegram_id text,
      access_token char(32) UNIQUE, quota bigint DEFAULT 0, used_quota bigint DEFAULT 0, request_count bigint DEFAULT 0,
      ${q('group')} varchar(64) DEFAULT 'default', aff_code varchar(32) UNIQUE, aff_count bigint DEFAULT 0, aff_quota bigint DEFAULT 0,
      aff_history bigint DEFAULT 0, inviter_id bigint, deleted_at ${time}, linux_do_id text, setting text, remark varchar(255),
      stripe_customer varchar(64), created_at bigint, last_login_at bigint DEFAULT 0, auth_version bigint NOT NULL DEFAULT 1)`,
    `CREATE TABLE channels (id ${pk}, type bigint DEFAULT 0, ${q('key')} text NOT NULL, open_ai_organization text, test_model text,
      status bigint DEFAULT 1, name text, weight bigint DEFAULT 0, created_time bigint, test_time bigint, response_time bigint,
      base_url text DEFAULT '', other text, balance real, balance_updated_time bigint, models text,
      ${q('group')} varchar(64) DEFAULT 'default', used_quota bigint DEFAULT 0, model_mapping text,
      status_code_mapping varchar(1024) DEFAULT '', priority bigint DEFAULT 0, auto_ban bigint DEFAULT 1, need_reconcile bigint DEFAULT 0,
      other_info text, tag text, setting text, param_override text, header_override text, remark varchar(255),
      channel_info ${json}, settings text)`,
    `CREATE TABLE abilities (${q('group')} varchar(64), model varchar(255), channel_id bigint, enabled ${bool}, priority bigint DEFAULT 0,
      weight bigint DEFAULT 0, tag text, PRIMARY KEY (${q('group')}, model, channel_id))`,
    `CREATE TABLE two_fas (id ${pk}, user_id bigint NOT NULL UNIQUE, secret varchar(255) NOT NULL, is_enabled ${bool},
      failed_attempts bigint DEFAULT 0, locked_until ${time}, last_used_at ${time}, created_at ${time}, updated_at ${time}, deleted_at ${time})`,
    `CREATE TABLE two_fa_backup_codes (id ${pk}, user_id bigint NOT NULL, code_hash varchar(255) NOT NULL, is_used ${bool},
      used_at ${time}, created_at ${time}, deleted_at ${time})`,
    `CREATE TABLE passkey_credentials (id ${pk}, user_id bigint NOT NULL, credential_id varchar(512) NOT NULL UNIQUE, public_key text NOT NULL,
      attestation_type varchar(255), aaguid varchar(512), sign_count bigint DEFAULT 0, clone_warning ${bool}, user_present ${bool},
      user_verified ${bool}, backup_eligible ${bool}, backup_state ${bool}, transports text, attachment varchar(32),
      last_used_at ${time}, created_at ${time}, updated_at ${time}, deleted_at ${time})`,
    `CREATE TABLE custom_oauth_providers (id ${pk}, name varchar(64) NOT NULL, slug varchar(64) NOT NULL UNIQUE, kind varchar(32) DEFAULT 'oauth_code',
      enabled ${bool}, client_id varchar(256), client_secret varchar(512), authorization_endpoint varchar(512), token_endpoint varchar(512),
      user_info_endpoint varchar(512), created_at ${time}, updated_at ${time})`,
    `CREATE TABLE user_oauth_bindings (id ${pk}, user_id bigint NOT NULL, provider_id bigint NOT NULL, provider_user_id varchar(256) NOT NULL,
      created_at ${time})`,
    `CREATE TABLE tokens (id ${pk}, user_id bigint, ${q('key')} varchar(128) UNIQUE, status bigint DEFAULT 1, name ${indexedText},
      created_time bigint, accessed_time bigint, expired_time bigint DEFAULT -1, remain_quota bigint DEFAULT 0, unlimited_quota ${bool},
      model_limits_enabled ${bool}, model_limits text, allow_ips text, used_quota bigint DEFAULT 0, ${q('group')} text,
      cross_group_retry ${bool}, auto_groups text, deleted_at ${time})`,
    `CREATE TABLE redemptions (id ${pk}, user_id bigint, ${q('key')} char(32) UNIQUE, status bigint DEFAULT 1, name ${indexedText},
      quota bigint DEFAULT 100, created_time bigint, redeemed_time bigint, used_user_id bigint, deleted_at ${time}, expired_time bigint)`,
    `CREATE TABLE logs (id ${pk}, user_id bigint, created_at bigint, type bigint, content text, username ${indexedText},
      token_name ${indexedText}, model_name ${indexedText}, quota bigint DEFAULT 0, prompt_tokens bigint DEFAULT 0,
      completion_tokens bigint DEFAULT 0, use_time bigint DEFAULT 0, is_stream ${bool}, channel_id bigint, token_id bigint DEFAULT 0,
      ${q('group')} ${indexedText}, ip ${indexedText}, request_id varchar(64) DEFAULT '', upstream_request_id varchar(128) DEFAULT '', other text)`,
  ];
}

export interface NewApiDb {
  db: Kysely<any>;
  database: Database<any>;
  /** A time value as GORM writes it for this dialect. */
  time(unixSeconds: number): unknown;
  bool(v: boolean): unknown;
  /** channel_info as GORM writes it: its Valuer answers bytes, which SQLite keeps as a BLOB; json text elsewhere. */
  info(json: string): unknown;
}

export async function createNewApiDb(url: string): Promise<NewApiDb> {
  const database = await openDatabase<any>(url);
  for (const ddl of newApiDdl(database.dialect)) await sql.raw(ddl).execute(database.db);
  const sqlite = database.dialect === 'sqlite';
  return {
    db: database.db,
    database,
    // GORM's SQLite driver stores times as text with nanoseconds and zone.
    time: (s) => (sqlite ? new Date(s * 1000).toISOString().replace('T', ' ').replace('Z', '000000+00:00') : new Date(s * 1000)),
    bool: (v) => (sqlite ? (v ? 1 : 0) : v),
    info: (json) => (sqlite ? Buffer.from(json) : json),
  };
}
