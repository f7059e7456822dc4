import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { codeIn, startSmtp } from '../helpers/smtp.js';

eachDatabase('A46 email codes and A41 registration with email verification', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp();
    s = await startAccount(v, {
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'gateway@example.test', EMAIL_VERIFICATION_ENABLED: 'true', EMAIL_VERIFICATION_RATE_LIMIT: '1000' },
    });
    await s.createUser('taken', 'taken password 1', { email: 'taken@example.com' });
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  test('a code is mailed over SMTP and registration consumes it once', async () => {
    const b = s.browser();
    const r = await b.get('/api/verification?email=New.User@Example.com');
    assert.deepEqual(r.json, { success: true, message: '' });
    const [mail] = await smtp.waitFor('new.user@example.com');
    assert.equal(mail.from, 'gateway@example.test');
    assert.doesNotMatch(mail.subject, /\d{6}/);
    const code = codeIn(mail);
    assert.ok(!s.log.text().includes(code), 'the code never reaches the log');

    const wrong = await b.post('/api/user/register', { username: 'newbie', password: 'newbie password', email: 'new.user@example.com', verification_code: code === '000000' ? '111111' : '000000' });
    assert.equal(wrong.json.code, 'REGISTER_VERIFICATION_CODE_INVALID');
    const good = await b.post('/api/user/register', { username: 'newbie', password: 'newbie password', email: 'new.user@example.com', verification_code: code });
    assert.equal(good.json.success, true, JSON.stringify(good.json));
    const again = await b.post('/api/user/register', { username: 'newbie2', password: 'newbie password', email: 'new.user@example.com', verification_code: code });
    assert.equal(again.json.code, 'REGISTER_VERIFICATION_CODE_INVALID');
    assert.equal((await b.login('newbie', 'newbie password')).json.success, true);
  });

  test('mail follows Accept-Language: Chinese template for zh', async () => {
    await s.browser().get('/api/verification?email=zh.user@example.com', { 'accept-language': 'zh-CN,zh;q=0.9' });
    const [mail] = await smtp.waitFor('zh.user@example.com');
    assert.equal(mail.subject, '您的验证码');
    assert.match(mail.text, /您的验证码为 \d{6}，10 分钟内有效/);
  });

  test('registration without a code is refused while verification is on', async () => {
    const r = await s.browser().post('/api/user/register', { username: 'nocode', password: 'nocode password' });
    assert.equal(r.json.code, 'REGISTER_EMAIL_VERIFICATION_REQUIRED');
  });

  test('an address in use gets the same answer and a notice instead of a code', async () => {
    const before = smtp.messages.length;
    const taken = await s.browser().get('/api/verification?email=taken@example.com');
    const fresh = await s.browser().get('/api/verification?email=fresh@example.com');
    assert.deepEqual(taken.json, fresh.json);
    assert.equal(taken.status, fresh.status);
    const [notice] = await smtp.waitFor('taken@example.com');
    await smtp.waitFor('fresh@example.com');
    assert.equal(smtp.messages.length, before + 2);
    assert.throws(() => codeIn(notice));
    assert.match(notice.text, /already belongs to an account/);
  });

  test('five wrong codes kill the code', async () => {
    const b = s.browser();
    await b.get('/api/verification?email=guess@example.com');
    const code = codeIn((await smtp.waitFor('guess@example.com'))[0]);
    const wrong = code === '999999' ? '999998' : '999999';
    for (let i = 0; i < 5; i++) {
      const r = await b.post('/api/user/register', { username: 'guesser', password: 'guess password', email: 'guess@example.com', verification_code: wrong });
      assert.equal(r.json.code, 'REGISTER_VERIFICATION_CODE_INVALID');
    }
    const right = await b.post('/api/user/register', { username: 'guesser', password: 'guess password', email: 'guess@example.com', verification_code: code });
    assert.equal(right.json.code, 'REGISTER_VERIFICATION_CODE_INVALID');
  });

  test('an expired code is refused', async () => {
    const b = s.browser();
    await b.get('/api/verification?email=late@example.com');
    const code = codeIn((await smtp.waitFor('late@example.com'))[0]);
    await s.ctx.database.db.updateTable('email_codes' as any).set({ expires_at: 1 } as any).execute();
    const r = await b.post('/api/user/register', { username: 'late', password: 'late password', email: 'late@example.com', verification_code: code });
    assert.equal(r.json.code, 'REGISTER_VERIFICATION_CODE_INVALID');
  });

  test('A46 timing does not depend on whether the address has an account', async () => {
    const time = async (email: string) => {
      const t = performance.now();
      const r = await s.browser().get(`/api/verification?email=${email}`);
      assert.equal(r.json.success, true);
      return performance.now() - t;
    };
    const taken: number[] = [];
    const fresh: number[] = [];
    for (let i = 0; i < 5; i++) {
      taken.push(await time('taken@example.com'));
      fresh.push(await time(`timing${i}@example.com`));
    }
    const median = (a: number[]) => a.sort((x, y) => x - y)[2];
    assert.ok(Math.abs(median(taken) - median(fresh)) < 50, `taken ${median(taken)}ms vs fresh ${median(fresh)}ms`);
  });

  test('bad addresses get a clear code, not a 500', async () => {
    for (const q of ['', '?email=', '?email=not-an-address', `?email=${'a'.repeat(60)}@x.io`]) {
      const r = await s.browser().get('/api/verification' + q);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'EMAIL_INVALID');
    }
  });
});

eachDatabase('A46 limits and the outbox', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { EMAIL_VERIFICATION_RATE_LIMIT: '2', EMAIL_VERIFICATION_RATE_LIMIT_DURATION: '30', TRUST_PROXY: 'true' } });
  });
  after(() => s.close());

  test('without SMTP the mail lands in DATA_DIR/outbox and the log says so without the code', async () => {
    const addr = `outbox-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const r = await s.browser().get(`/api/verification?email=${addr}`, { 'x-forwarded-for': `10.1.${Math.floor(Math.random() * 250)}.1` });
    assert.equal(r.json.success, true);
    const dir = path.join(s.dataDir, 'outbox');
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.eml'));
    assert.equal(files.length, 1);
    const eml = fs.readFileSync(path.join(dir, files[0]), 'utf8');
    assert.ok(eml.includes(`To: ${addr}`));
    const code = /is (\d{6})\./.exec(eml)![1];
    assert.match(s.log.text(), /mail written to the outbox/);
    assert.ok(!s.log.text().includes(code));
    assert.ok(!s.log.text().includes(addr), 'recipient is masked in the log');
  });

  test('per address and per IP: a third send in the window is 429 with Retry-After', async () => {
    const b = s.browser();
    // Random IPs and addresses: with Redis the counters outlive one test run.
    const n = () => Math.floor(Math.random() * 250) + 1;
    const net = `10.${n()}.${n()}`;
    const tag = Math.random().toString(36).slice(2, 8);
    const from = (ip: string, email: string) =>
      b.get(`/api/verification?email=${email.replace('@', `-${tag}@`)}`, { 'x-forwarded-for': ip.replace('10.0.0', net) });
    assert.equal((await from('10.0.0.1', 'limit@example.com')).json.success, true);
    assert.equal((await from('10.0.0.2', 'limit@example.com')).json.success, true);
    const byAddress = await from('10.0.0.3', 'limit@example.com');
    assert.equal(byAddress.status, 429);
    assert.equal(byAddress.json.code, 'EMAIL_VERIFICATION_RATE_LIMITED');
    assert.ok(Number(byAddress.headers.get('retry-after')) >= 1);
    assert.match(byAddress.json.message, /wait \d+ seconds/);

    assert.equal((await from('10.0.0.9', 'a1@example.com')).json.success, true);
    assert.equal((await from('10.0.0.9', 'a2@example.com')).json.success, true);
    const byIp = await from('10.0.0.9', 'a3@example.com');
    assert.equal(byIp.status, 429);
    assert.equal(byIp.json.code, 'EMAIL_VERIFICATION_RATE_LIMITED');
  });
});
