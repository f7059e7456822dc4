import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import { cbor, SoftAuthenticator } from '../helpers/webauthn.js';
import type { NewApiDb } from './new-api-source.js';
import { ORIGIN } from './harness.js';

export const T0 = 1_700_000_000;
export const ALICE_PASSWORD = 'alice password 1';
export const BOB_PASSWORD = 'bob password 22';
export const CAROL_PASSWORD = 'carol password 3';
export const BOB_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
export const BACKUP = ['ABCD-EFGH', 'JKLM-NPQR', 'STUV-WXYZ'];
export const KEYS = { single: 'sk-single-secret-0001', multi: ['sk-multi-secret-a', 'sk-multi-secret-b', 'sk-multi-secret-c'] };
export const CLIENT_SECRET = 'corp-sso-client-secret-zz';

/** The passkey carol's authenticator holds, as new-api stored it (standard base64). */
export function passkeyFor(auth: SoftAuthenticator) {
  auth.create({ rp: { id: 'localhost' }, user: { id: Buffer.from('3').toString('base64url') }, challenge: 'AAAA' });
  const cred = auth.credentials[0]!;
  const jwk = crypto.createPublicKey(cred.key).export({ format: 'jwk' });
  const cose = cbor(new Map<number, unknown>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
  return { id: cred.id, idStd: cred.id.toString('base64'), cose, keyStd: cose.toString('base64') };
}

export interface Filled {
  hashes: Record<string, string>;
  backupHashes: string[];
  auth: SoftAuthenticator;
  passkey: ReturnType<typeof passkeyFor>;
}

/**
 * Users 1–8 (alice: bcrypt, root, GitHub; bob: TOTP + backup codes, Telegram/WeChat/LinuxDO, invited by
 * alice; carol: two passkeys, Discord/OIDC and a custom provider; dave/frank: clash with local users;
 * erin: deleted; gina: undecodable TOTP secret; hank: unfinished 2FA setup) and channels 1–5 (single key
 * with channel_info as text, multi-key with it as GORM writes it, an unsupported type, a Vertex channel
 * without region, a corrupt channel_info) with the reference's abilities.
 */
export async function fill(src: NewApiDb): Promise<Filled> {
  const { db, time, bool, info } = src;
  const hashes = { alice: bcrypt.hashSync(ALICE_PASSWORD, 4), bob: bcrypt.hashSync(BOB_PASSWORD, 4), carol: bcrypt.hashSync(CAROL_PASSWORD, 4) };
  const user = (id: number, username: string, o: Record<string, unknown> = {}) => ({
    id, username, password: bcrypt.hashSync(`${username} pw`, 4), display_name: username.toUpperCase(), role: 1, status: 1, email: '',
    group: 'default', aff_code: `aff${id}`, inviter_id: 0, created_at: T0 + id, setting: '{"x":1}', quota: 500, ...o,
  });
  await db.insertInto('users').values([
    user(1, 'alice', { password: hashes.alice, display_name: 'Alice A', role: 100, email: 'Alice@Example.com', github_id: 'gh-1', group: 'vip', aff_code: 'AFFALICE' }),
    user(2, 'bob', { password: hashes.bob, inviter_id: 1, telegram_id: 'tg-2', wechat_id: 'wx-2', linux_do_id: 'ld-2', status: 2 }),
    user(3, 'carol', { password: hashes.carol, discord_id: 'dc-3', oidc_id: 'oidc-3', role: 10, email: 'carol@example.com' }),
    user(4, 'dave'),
    user(5, 'erin', { deleted_at: time(T0 + 100) }),
    user(6, 'frank', { email: 'frank@example.com' }),
    user(7, 'gina'),
    user(8, 'hank'),
  ]).execute();
  await db.insertInto('two_fas').values([
    { id: 1, user_id: 2, secret: BOB_TOTP, is_enabled: bool(true), failed_attempts: 1, created_at: time(T0), updated_at: time(T0) },
    { id: 2, user_id: 7, secret: 'not base32 at all!', is_enabled: bool(true), created_at: time(T0), updated_at: time(T0) },
    { id: 3, user_id: 8, secret: BOB_TOTP, is_enabled: bool(false), created_at: time(T0), updated_at: time(T0) },
  ]).execute();
  const backupHashes = BACKUP.map((c) => bcrypt.hashSync(c, 4));
  await db.insertInto('two_fa_backup_codes').values([
    { id: 1, user_id: 2, code_hash: backupHashes[0], is_used: bool(false), created_at: time(T0) },
    { id: 2, user_id: 2, code_hash: backupHashes[1], is_used: bool(false), created_at: time(T0) },
    { id: 3, user_id: 2, code_hash: backupHashes[2], is_used: bool(true), used_at: time(T0 + 5), created_at: time(T0) },
  ]).execute();
  const auth = new SoftAuthenticator(ORIGIN);
  const passkey = passkeyFor(auth);
  const old = crypto.randomBytes(32);
  await db.insertInto('passkey_credentials').values([
    { id: 1, user_id: 3, credential_id: old.toString('base64'), public_key: passkey.keyStd, sign_count: 2, transports: '["usb"]', last_used_at: time(T0 + 10), created_at: time(T0), updated_at: time(T0) },
    { id: 2, user_id: 3, credential_id: passkey.idStd, public_key: passkey.keyStd, attestation_type: 'none', sign_count: 0, transports: '["internal","hybrid"]', attachment: 'platform', user_verified: bool(true), last_used_at: time(T0 + 20), created_at: time(T0 + 1), updated_at: time(T0 + 1) },
  ]).execute();
  await db.insertInto('custom_oauth_providers').values({ id: 1, name: 'Corp', slug: 'corp-sso', enabled: bool(true), client_id: 'cid', client_secret: CLIENT_SECRET, created_at: time(T0) }).execute();
  await db.insertInto('user_oauth_bindings').values([
    { id: 1, user_id: 3, provider_id: 1, provider_user_id: 'corp-3', created_at: time(T0) },
    { id: 2, user_id: 6, provider_id: 1, provider_user_id: 'corp-6', created_at: time(T0) },
  ]).execute();
  const channel = (id: number, o: Record<string, unknown>) => ({
    id, type: 1, key: `sk-other-${id}`, status: 1, name: `ch${id}`, weight: 0, created_time: T0, test_time: 0, response_time: 0, base_url: '',
    other: '', balance: 0, balance_updated_time: 0, models: 'gpt-4o', group: 'default', used_quota: 0, priority: 0, auto_ban: 1, other_info: '',
    channel_info: JSON.stringify({ is_multi_key: false, multi_key_size: 0, multi_key_status_list: null, multi_key_polling_index: 0, multi_key_mode: '' }),
    settings: '', ...o,
  });
  await db.insertInto('channels').values([
    channel(1, {
      key: KEYS.single, open_ai_organization: 'org-1', test_model: 'gpt-4o-mini', name: 'primary', weight: 3, created_time: T0 + 1, test_time: T0 + 2,
      response_time: 321, base_url: 'https://api.example.com', other: 'o', balance: 12.5, balance_updated_time: T0 + 3, models: 'gpt-4o,gpt-4o-mini',
      group: 'default, vip', used_quota: 777, model_mapping: '{"gpt-4o":"gpt-4o-2024"}', status_code_mapping: '', priority: 5, auto_ban: 0,
      other_info: '{"source":"x"}', tag: 'tagA', setting: '{"proxy":""}', param_override: '{"temperature":0}', header_override: null, remark: 'note',
      settings: '{"azure_responses_version":""}',
    }),
    channel(2, {
      type: 14, key: KEYS.multi.join('\n') + '\n', name: 'multi', models: 'claude-3', status: 3, priority: 1, weight: 7,
      channel_info: info(JSON.stringify({ is_multi_key: true, multi_key_size: 3, multi_key_status_list: { 1: 3 }, multi_key_disabled_reason: { 1: 'quota' }, multi_key_disabled_time: { 1: T0 }, multi_key_polling_index: 2, multi_key_mode: 'polling' })),
    }),
    channel(3, { type: 99, name: 'future type' }),
    channel(4, { type: 41, name: 'vertex without region', other: '' }),
    // Cut short on SQLite; PostgreSQL and MySQL keep only valid JSON, so there it has the wrong types.
    channel(5, { type: 14, key: KEYS.multi.join('\n'), name: 'corrupt info', channel_info: src.database.dialect === 'sqlite' ? info('{"is_multi_key":tr') : '{"is_multi_key":"yes","multi_key_size":"three"}' }),
  ]).execute();
  const ability = (group: string, model: string, channel_id: number, enabled: boolean, priority = 0, weight = 0, tag: string | null = null) => ({ group, model, channel_id, enabled: bool(enabled), priority, weight, tag });
  await db.insertInto('abilities').values([
    ability('default', 'gpt-4o', 1, true, 5, 3, 'tagA'),
    ability('default', 'gpt-4o-mini', 1, true, 5, 3, 'tagA'),
    ability('vip', 'gpt-4o', 1, true, 5, 3, 'tagA'),
    ability('vip', 'gpt-4o-mini', 1, true, 5, 3, 'tagA'),
    ability('default', 'ghost-model', 1, true, 5, 3, 'tagA'),
    ability('default', 'claude-3', 2, false, 1, 7),
    ability('default', 'gpt-4o', 3, true),
  ]).execute();
  return { hashes, backupHashes, auth, passkey };
}
