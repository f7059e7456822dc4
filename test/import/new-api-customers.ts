import crypto from 'node:crypto';
import type { NewApiDb } from './new-api-source.js';
import { T0 } from './new-api-data.js';

/** 48 letters and digits, as new-api's GenerateKey makes a token key (stored without `sk-`). */
export function tokenKey(seed: string): string {
  const hex = crypto.createHash('sha512').update(seed).digest('hex').slice(0, 48);
  return [...hex].map((c, i) => (i % 3 === 0 ? c.toUpperCase() : c)).join('');
}

/** 32 hex characters, as new-api makes a redemption code. */
export const codeOf = (seed: string) => crypto.createHash('md5').update(seed).digest('hex');

export const STORED = { aliceMain: tokenKey('alice-main'), aliceOld: tokenKey('alice-old'), bob: tokenKey('bob'), gone: tokenKey('gone'), erin: tokenKey('erin'), dave: tokenKey('dave') };
export const CODES = { fresh: codeOf('fresh'), used: codeOf('used'), disabled: codeOf('disabled'), deleted: codeOf('deleted'), expired: codeOf('expired') };
export const BALANCES = { alice: 1_234_567, bob: 50_000 };
export const NOW = () => Math.floor(Date.now() / 1000);

/**
 * On top of fill()'s users 1–8: alice's (1) and bob's (2) balances and usage; tokens 1–7 (alice's main one
 * unlimited with model and IP limits, her old one disabled with an expiry, bob's, one deleted, erin's (a
 * deleted user), carol's with a key new-api never made, dave's (a user that clashes here)); codes 1–5 (unused,
 * used, disabled, deleted, unused but expired); and logs 1–7 around `now` (consume and top-up rows of the
 * last days, one too old, a manage row, one of erin's, one without a request id).
 */
export async function fillCustomers(src: NewApiDb, now: number) {
  const { db, bool, time } = src;
  await db.updateTable('users').set({ quota: BALANCES.alice, used_quota: 99_000, request_count: 321 }).where('id', '=', 1).execute();
  await db.updateTable('users').set({ quota: BALANCES.bob, used_quota: 7, request_count: 2 }).where('id', '=', 2).execute();
  const token = (id: number, user_id: number, key: string, o: Record<string, unknown> = {}) => ({
    id, user_id, key, status: 1, name: `token-${id}`, created_time: T0 + id, accessed_time: T0 + 100 + id, expired_time: -1, remain_quota: 0,
    unlimited_quota: bool(false), model_limits_enabled: bool(false), model_limits: '', allow_ips: '', used_quota: 0, group: '',
    cross_group_retry: bool(false), auto_groups: '', ...o,
  });
  await db.insertInto('tokens').values([
    token(1, 1, STORED.aliceMain, { name: 'alice main', unlimited_quota: bool(true), model_limits_enabled: bool(true), model_limits: 'gpt-4o,gpt-4o-mini', allow_ips: '127.0.0.1\n10.0.0.0/8', used_quota: 4321, group: 'vip' }),
    token(2, 1, STORED.aliceOld, { name: 'alice old', status: 2, expired_time: T0 + 999, remain_quota: 1000 }),
    token(3, 2, STORED.bob, { name: 'bob', remain_quota: 20_000, used_quota: 5 }),
    token(4, 1, STORED.gone, { name: 'gone', deleted_at: time(T0 + 50) }),
    token(5, 5, STORED.erin),
    token(6, 3, 'not-a-new-api-key'),
    token(7, 4, STORED.dave),
  ]).execute();
  const code = (id: number, key: string, o: Record<string, unknown> = {}) => ({ id, user_id: 1, key, status: 1, name: `code ${id}`, quota: 5000 * id, created_time: T0 + id, redeemed_time: 0, used_user_id: 0, expired_time: 0, ...o });
  await db.insertInto('redemptions').values([
    code(1, CODES.fresh),
    code(2, CODES.used, { status: 3, redeemed_time: T0 + 9, used_user_id: 2 }),
    code(3, CODES.disabled, { status: 2 }),
    code(4, CODES.deleted, { deleted_at: time(T0 + 9) }),
    code(5, CODES.expired, { expired_time: T0 + 10, user_id: 99 }),
  ]).execute();
  const log = (id: number, user_id: number, type: number, created_at: number, o: Record<string, unknown> = {}) => ({
    id, user_id, type, created_at, content: '', username: '', token_name: '', model_name: '', quota: 0, prompt_tokens: 0, completion_tokens: 0,
    use_time: 0, is_stream: bool(false), channel_id: 1, token_id: 0, group: 'default', ip: '', request_id: '', upstream_request_id: '', other: '', ...o,
  });
  await db.insertInto('logs').values([
    log(1, 1, 2, now - 86_400, { token_name: 'alice main', token_id: 1, model_name: 'gpt-4o', quota: 320, prompt_tokens: 100, completion_tokens: 20, use_time: 3, is_stream: bool(true), request_id: 'req-one' }),
    log(2, 1, 1, now - 3_600, { content: 'Recharged via redemption code: $0.01', quota: 5000 }),
    log(3, 1, 2, now - 30 * 86_400, { token_name: 'alice main', token_id: 1, model_name: 'gpt-4o', quota: 10 }),
    log(4, 1, 3, now - 60, { content: 'admin changed the quota', quota: 77 }),
    log(5, 5, 2, now - 60, { model_name: 'gpt-4o', quota: 9 }),
    log(6, 2, 2, now - 120, { token_name: 'bob', token_id: 3, model_name: 'gpt-4o-mini', quota: 12, prompt_tokens: 7, completion_tokens: 1 }),
    log(7, 2, 2, now - 100, { token_name: 'deleted one', token_id: 4, model_name: 'gpt-4o-mini', quota: 3, use_time: 1 }),
  ]).execute();
}
