import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { codeIn, startSmtp } from '../helpers/smtp.js';
import type { Browser } from '../helpers/http.js';

async function proof(b: Browser, password: string, email: string) {
  const r = await b.post('/api/verify', { method: 'password', scope: 'account.binding.bind', password, context: { provider: 'email', email } });
  assert.equal(r.json.success, true, r.text);
  return r.json.data.proof_token as string;
}

eachDatabase('A04 → A03 → A02 email binding', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp({ failRecipients: ['bounce@example.com'] });
    s = await startAccount(v, { env: { SMTP_URL: smtp.url, EMAIL_VERIFICATION_RATE_LIMIT: '1000' } });
    await s.createUser('erin', 'erin password 1');
    await s.createUser('frank', 'frank password 1', { email: 'frank@example.com' });
    await s.createUser('gina', 'gina password 1', { email: 'gina@example.com' });
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  async function start(b: Browser, password: string, email: string) {
    const p = await proof(b, password, email);
    return b.post('/api/oauth/email/bind/start', { email }, { 'x-security-proof': p });
  }

  test('first binding: proof-guarded start, code to the new address, completion sets the email once', async () => {
    const b = s.browser();
    await b.login('erin', 'erin password 1');
    const otherDevice = s.browser();
    await otherDevice.login('erin', 'erin password 1');
    const noProof = await b.post('/api/oauth/email/bind/start', { email: 'erin@example.com' });
    assert.equal(noProof.status, 403);
    const st = await start(b, 'erin password 1', 'Erin@Example.com');
    assert.equal(st.json.success, true, st.text);
    const d = st.json.data;
    assert.equal(d.email, 'erin@example.com');
    assert.equal(d.old_email_required, false);
    assert.equal(d.current_email, '');
    assert.ok(d.resend_at > Date.now() / 1000 + 50);
    const code = codeIn((await smtp.waitFor('erin@example.com'))[0]);
    assert.ok(!s.log.text().includes(code));

    const row = await s.ctx.database.db.selectFrom('auth_flows').select('payload').where('purpose', '=', 'email_binding').execute();
    assert.ok(row.every((r) => !r.payload.includes(code)), 'codes are stored hashed');

    const wrong = await b.post('/api/oauth/email/bind', { flow_token: d.flow_token, email: 'erin@example.com', code: code === '000000' ? '000001' : '000000' });
    assert.equal(wrong.json.code, 'EMAIL_BINDING_CODE_INVALID');
    const done = await b.post('/api/oauth/email/bind', { flow_token: d.flow_token, email: 'erin@example.com', code });
    assert.equal(done.json.success, true, done.text);
    const { access_token, token_type, session, ...rest } = done.json.data;
    assert.deepEqual(rest, { email: 'erin@example.com', notification_warning: false, access_expires_at: rest.access_expires_at });
    assert.equal(token_type, 'Bearer');
    assert.equal(session.current, true);
    // A new recovery address rotates authority: the old token and the other device stop, the fresh token works.
    assert.equal((await b.get('/api/user/sessions')).status, 401);
    assert.equal((await otherDevice.get('/api/user/sessions')).status, 401);
    b.accessToken = access_token;
    assert.equal((await b.get('/api/user/sessions')).json.success, true);
    const again = await b.post('/api/oauth/email/bind', { flow_token: d.flow_token, code });
    assert.equal(again.json.code, 'EMAIL_BINDING_FLOW_INVALID');
    assert.equal((await s.browser().login('erin@example.com', 'erin password 1')).json.success, true);
  });

  test('changing the address with a password proof needs the code sent to the old address too', async () => {
    const b = s.browser();
    await b.login('frank', 'frank password 1');
    smtp.messages.length = 0;
    const st = (await start(b, 'frank password 1', 'frank.new@example.com')).json.data;
    assert.equal(st.old_email_required, true);
    assert.equal(st.current_email, 'f***@example.com');
    const newCode = codeIn((await smtp.waitFor('frank.new@example.com'))[0]);
    const oldCode = codeIn((await smtp.waitFor('frank@example.com'))[0]);
    const onlyNew = await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, code: newCode });
    assert.equal(onlyNew.json.code, 'EMAIL_BINDING_CODE_INVALID');
    const done = await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, new_code: newCode, old_code: oldCode });
    assert.equal(done.json.success, true, done.text);
    await smtp.waitFor('frank@example.com', 2);
    assert.ok(smtp.messages.some((m) => m.to.includes('frank@example.com') && /email address changed/.test(m.text)));
  });

  test('resend waits 60 s (429 with Retry-After), then sends new codes', async () => {
    const b = s.browser();
    await b.login('gina', 'gina password 1');
    const st = (await start(b, 'gina password 1', 'gina2@example.com')).json.data;
    const early = await b.post('/api/oauth/email/bind/resend', { flow_token: st.flow_token });
    assert.equal(early.status, 429);
    assert.equal(early.json.code, 'EMAIL_BINDING_RESEND_WAIT');
    assert.ok(Number(early.headers.get('retry-after')) > 50);
    const flows = await s.ctx.database.db.selectFrom('auth_flows').select(['token_hash', 'payload']).where('purpose', '=', 'email_binding').where('consumed_at', 'is', null).execute();
    for (const f of flows) {
      const p = JSON.parse(f.payload);
      await s.ctx.database.db.updateTable('auth_flows').set({ payload: JSON.stringify({ ...p, resend_at: 1 }) }).where('token_hash', '=', f.token_hash).execute();
    }
    smtp.messages.length = 0;
    const later = await b.post('/api/oauth/email/bind/resend', { flow_token: st.flow_token });
    assert.equal(later.json.success, true, later.text);
    assert.equal(later.json.data.flow_token, st.flow_token);
    const fresh = codeIn((await smtp.waitFor('gina2@example.com'))[0]);
    const old = codeIn((await smtp.waitFor('gina@example.com'))[0]);
    assert.equal((await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, code: fresh, old_code: old })).json.success, true);
  });

  test('five wrong codes lock the flow; another session or user cannot use it', async () => {
    const b = s.browser();
    await b.login('erin', 'erin password 1');
    const st = (await start(b, 'erin password 1', 'erin3@example.com')).json.data;
    const other = s.browser();
    await other.login('frank', 'frank password 1');
    assert.equal((await other.post('/api/oauth/email/bind', { flow_token: st.flow_token, code: '123456' })).json.code, 'EMAIL_BINDING_FLOW_INVALID');
    const sameUserOtherSession = s.browser();
    await sameUserOtherSession.login('erin', 'erin password 1');
    assert.equal((await sameUserOtherSession.post('/api/oauth/email/bind', { flow_token: st.flow_token, code: '123456' })).json.code, 'EMAIL_BINDING_FLOW_INVALID');
    const code = codeIn((await smtp.waitFor('erin3@example.com'))[0]);
    const wrong = code === '111111' ? '222222' : '111111';
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push((await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, code: wrong })).json.code);
    assert.deepEqual(answers, ['EMAIL_BINDING_CODE_INVALID', 'EMAIL_BINDING_CODE_INVALID', 'EMAIL_BINDING_CODE_INVALID', 'EMAIL_BINDING_CODE_INVALID', 'EMAIL_BINDING_LOCKED']);
    assert.equal((await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, code })).json.code, 'EMAIL_BINDING_FLOW_INVALID');
  });

  test('an address taken meanwhile is refused at completion; undeliverable addresses fail at start', async () => {
    const b = s.browser();
    await b.login('gina', 'gina password 1');
    const st = (await start(b, 'gina password 1', 'shared@example.com')).json.data;
    const code = codeIn((await smtp.waitFor('shared@example.com'))[0]);
    await s.createUser('hank', 'hank password 1', { email: 'shared@example.com' });
    const oldCode = codeIn((await smtp.waitFor('gina2@example.com')).at(-1)!);
    const r = await b.post('/api/oauth/email/bind', { flow_token: st.flow_token, code, old_code: oldCode });
    assert.equal(r.json.code, 'EMAIL_ALREADY_TAKEN');

    const bounce = await start(b, 'gina password 1', 'bounce@example.com');
    assert.equal(bounce.json.code, 'EMAIL_BINDING_DELIVERY_FAILED');
  });

  test('a security notice that cannot be delivered sets notification_warning and keeps the change', async () => {
    const id = await s.createUser('olga', 'olga password 1', { email: 'bounce@example.com' });
    const bindings = s.services.bindings;
    await bindings.bind(id, bindings.kindOf('github')!, '123123');
    const b = s.browser();
    await b.login('olga', 'olga password 1');
    const p = await b.post('/api/verify', { method: 'password', scope: 'account.binding.unbind', password: 'olga password 1', context: { provider_id: 'github' } });
    const r = await b.delete('/api/user/oauth/bindings/github', { 'x-security-proof': p.json.data.proof_token });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual(r.json.data, { provider_id: 'github', notification_warning: true });
    assert.deepEqual(await b.get('/api/user/oauth/bindings').then((x) => x.json.data), []);
    assert.match(s.log.text(), /"notification_failed":true/);
    assert.ok(!s.log.text().includes('bounce@example.com'), 'the address is masked in the log');
  });
});

eachDatabase('A04 email binding codes live EMAIL_CODE_TTL_SECONDS', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp();
    s = await startAccount(v, { env: { SMTP_URL: smtp.url, EMAIL_CODE_TTL_SECONDS: '120' } });
    await s.createUser('ivan', 'ivan password 1');
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  test('the flow expires after the configured lifetime and the mail states it', async () => {
    const b = s.browser();
    await b.login('ivan', 'ivan password 1');
    const p = await proof(b, 'ivan password 1', 'ivan@example.com');
    const st = await b.post('/api/oauth/email/bind/start', { email: 'ivan@example.com' }, { 'x-security-proof': p });
    assert.equal(st.json.success, true, st.text);
    const lifetime = st.json.data.expires_at - Date.now() / 1000;
    assert.ok(lifetime > 100 && lifetime <= 121, `expires in ${lifetime} s`);
    const [mail] = await smtp.waitFor('ivan@example.com');
    assert.match(mail.text, /valid for 2 minutes/);
  });
});
