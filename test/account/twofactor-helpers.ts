import assert from 'node:assert/strict';
import { totpCode } from '../../src/account/two-factor/totp.js';
import type { AccountServer } from '../helpers/account.js';
import type { Browser } from '../helpers/http.js';

/** A TOTP code of the step `offset` steps away from now (the server accepts -1, 0, +1). */
export function codeAt(secret: string, offset = 0) {
  return totpCode(secret, Date.now() + offset * 30_000);
}

/** Forgets the replay guard's last step so the next test can use current codes again (test arrangement). */
export async function resetReplayGuard(s: AccountServer, userId: number) {
  await s.ctx.database.db.updateTable('two_factor').set({ last_step: 0, failed_attempts: 0, locked_until: 0 }).where('user_id', '=', userId).execute();
}

/** A47 with the password method: a proof for `scope`. */
export async function passwordProof(b: Browser, password: string, scope: string, context?: unknown) {
  const r = await b.post('/api/verify', { method: 'password', scope, password, ...(context ? { context } : {}) });
  assert.equal(r.json.success, true, r.text);
  return r.json.data.proof_token as string;
}

/** Logs in, passes A47 with the password and enrols TOTP through A15 + A14. Returns the secret and codes. */
export async function enrolTotp(s: AccountServer, username: string, password: string) {
  const b = s.browser();
  const login = await b.login(username, password);
  assert.equal(login.json.success, true, login.text);
  const proof = await passwordProof(b, password, '2fa.setup');
  const setup = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof });
  assert.equal(setup.json.success, true, setup.text);
  const { secret, backup_codes, flow_token } = setup.json.data;
  const enable = await b.post('/api/user/2fa/enable', { code: codeAt(secret, -1), flow_token });
  assert.equal(enable.json.success, true, enable.text);
  b.accessToken = enable.json.data.access_token;
  return { b, secret: secret as string, backupCodes: backup_codes as string[], setup: setup.json.data };
}

/** Moves the sign-in of every session of the user back past the recent-login window (test arrangement: time passing). */
export async function endRecentLogin(s: AccountServer, userId: number) {
  const back = s.ctx.config.securityRecentLoginSeconds + 1;
  await s.ctx.database.db
    .updateTable('user_sessions')
    .set((eb) => ({ created_at: eb('created_at', '-', back) }))
    .where('user_id', '=', userId)
    .execute();
}
