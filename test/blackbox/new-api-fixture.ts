import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import bcrypt from 'bcryptjs';
import { newApiDdl } from '../import/new-api-source.js';
import { tempDir } from '../helpers/services.js';

/** new-api's customer tables as its GORM models make them on SQLite (model/token.go, redemption.go, log.go). */
const CUSTOMER_DDL = [
  `CREATE TABLE tokens (id integer PRIMARY KEY AUTOINCREMENT, user_id bigint, \`key\` varchar(128) UNIQUE, status bigint DEFAULT 1, name text,
    created_time bigint, accessed_time bigint, expired_time bigint DEFAULT -1, remain_quota bigint DEFAULT 0, unlimited_quota numeric,
    model_limits_enabled numeric, model_limits text, allow_ips text, used_quota bigint DEFAULT 0, \`group\` text,
    cross_group_retry numeric, auto_groups text, deleted_at datetime)`,
  `CREATE TABLE redemptions (id integer PRIMARY KEY AUTOINCREMENT, user_id bigint, \`key\` char(32) UNIQUE, status bigint DEFAULT 1, name text,
    quota bigint DEFAULT 100, created_time bigint, redeemed_time bigint, used_user_id bigint, deleted_at datetime, expired_time bigint)`,
  `CREATE TABLE logs (id integer PRIMARY KEY AUTOINCREMENT, user_id bigint, created_at bigint, type bigint, content text, username text,
    token_name text, model_name text, quota bigint DEFAULT 0, prompt_tokens bigint DEFAULT 0, completion_tokens bigint DEFAULT 0,
    use_time bigint DEFAULT 0, is_stream numeric, channel_id bigint, token_id bigint DEFAULT 0, \`group\` text, ip text,
    request_id varchar(64) DEFAULT '', upstream_request_id varchar(128) DEFAULT '', other text)`,
];

/** One paying new-api customer: balance and usage, a limited token, an unused top-up code, a consume row of yesterday. */
export const LEGACY = {
  username: 'legacy_payer',
  password: 'legacy payer password',
  quota: 600_000,
  used_quota: 1234,
  request_count: 7,
  tokenName: 'legacy sdk',
  remain_quota: 100_000,
  token_used: 4321,
  codeQuota: 5000,
  logQuota: 640,
};

/**
 * A new-api SQLite database (its file, as a new-api installation leaves it) with LEGACY's rows; answers the
 * customer's `sk-…` key and the unused code, which must keep working after the import.
 */
export function newApiDatabase() {
  const dir = tempDir('blackbox-new-api-');
  const file = path.join(dir, 'one-api.db');
  const db = new Database(file);
  const ddl = newApiDdl('sqlite');
  for (const s of ddl) db.exec(s);
  for (const s of CUSTOMER_DDL) if (!ddl.some((d) => d.includes(`CREATE TABLE ${s.split(' ')[2]} `))) db.exec(s);
  // new-api's GenerateKey: 48 letters and digits, stored without the `sk-` its relay strips.
  const stored = [...crypto.randomBytes(48)].map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62]).join('');
  const code = crypto.randomBytes(16).toString('hex');
  const now = Math.floor(Date.now() / 1000);
  db.prepare(
    `INSERT INTO users (id, username, password, display_name, role, status, email, quota, used_quota, request_count, "group", aff_code, inviter_id, created_at, auth_version)
     VALUES (1, ?, ?, 'Legacy', 1, 1, '', ?, ?, ?, 'default', 'afflegacy', 0, ?, 1)`,
  ).run(LEGACY.username, bcrypt.hashSync(LEGACY.password, 4), LEGACY.quota, LEGACY.used_quota, LEGACY.request_count, now - 86_400 * 90);
  db.prepare(
    `INSERT INTO tokens (id, user_id, key, status, name, created_time, accessed_time, expired_time, remain_quota, unlimited_quota, model_limits_enabled,
     model_limits, allow_ips, used_quota, "group", cross_group_retry, auto_groups) VALUES (1, 1, ?, 1, ?, ?, ?, -1, ?, 0, 0, '', '', ?, '', 0, '')`,
  ).run(stored, LEGACY.tokenName, now - 86_400 * 30, now - 86_400, LEGACY.remain_quota, LEGACY.token_used);
  db.prepare(`INSERT INTO redemptions (id, user_id, key, status, name, quota, created_time, redeemed_time, used_user_id, expired_time) VALUES (1, 1, ?, 1, 'legacy code', ?, ?, 0, 0, 0)`).run(
    code,
    LEGACY.codeQuota,
    now - 86_400 * 10,
  );
  db.prepare(
    `INSERT INTO logs (id, user_id, created_at, type, content, username, token_name, model_name, quota, prompt_tokens, completion_tokens, use_time, is_stream,
     channel_id, token_id, "group", ip, request_id, upstream_request_id, other) VALUES (1, 1, ?, 2, '', ?, ?, 'gpt-4o', ?, 200, 40, 2, 0, 1, 1, 'default', '', 'legacy-req-1', '', '')`,
  ).run(now - 86_400, LEGACY.username, LEGACY.tokenName, LEGACY.logQuota);
  db.close();
  return { file, dir, key: `sk-${stored}`, code };
}
