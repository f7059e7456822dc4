import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startSmtp, type ReceivedMail } from '../helpers/smtp.js';

function linkIn(mail: ReceivedMail) {
  const m = /(http:\/\/\S+\/user\/reset\?email=[^&\s]+&token=[A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error('no reset link');
  const u = new URL(m[1]);
  return { email: u.searchParams.get('email')!, token: u.searchParams.get('token')! };
}

eachDatabase('A11 / A42 password reset', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp();
    s = await startAccount(v, { env: { SMTP_URL: smtp.url, SERVER_ADDRESS: 'http://dash.example.test', EMAIL_VERIFICATION_RATE_LIMIT: '1000' } });
    await s.createUser('rita', 'original password', { email: 'rita@example.com' });
    await s.createUser('sam', 'sam original pw', { email: 'sam@example.com' });
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  test('A11 answers the same for known and unknown addresses; only the known one gets mail', async () => {
    const known = await s.browser().get('/api/reset_password?email=rita@example.com');
    const unknown = await s.browser().get('/api/reset_password?email=nobody@example.com');
    assert.deepEqual(known.json, { success: true, message: '' });
    assert.deepEqual(unknown.json, known.json);
    assert.equal(unknown.status, known.status);
    const [mail] = await smtp.waitFor('rita@example.com');
    assert.match(mail.text, /http:\/\/dash\.example\.test\/user\/reset\?/);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(smtp.messages.filter((m) => m.to.includes('nobody@example.com')).length, 0);
  });

  test('A11 timing does not depend on whether the address exists', async () => {
    const time = async (email: string) => {
      const t = performance.now();
      await s.browser().get(`/api/reset_password?email=${email}`);
      return performance.now() - t;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time('sam@example.com'));
      unknown.push(await time(`ghost${i}@example.com`));
    }
    const median = (a: number[]) => a.sort((x, y) => x - y)[2];
    assert.ok(Math.abs(median(known) - median(unknown)) < 50, `known ${median(known)}ms vs unknown ${median(unknown)}ms`);
  });

  test('A42 with the generated password: single use, sessions revoked, issuance count kept', async () => {
    const b = s.browser();
    assert.equal((await b.login('rita', 'original password')).json.success, true);
    const other = s.browser();
    await other.login('rita', 'original password');
    smtp.messages.length = 0;
    await s.browser().get('/api/reset_password?email=rita@example.com');
    const { email, token } = linkIn((await smtp.waitFor('rita@example.com'))[0]);
    const issuedBefore = await s.ctx.database.db.selectFrom('user_sessions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();

    const r = await s.browser().post('/api/user/reset', { email, token });
    assert.equal(r.json.success, true);
    assert.equal(typeof r.json.data, 'string');
    assert.equal(r.json.data.length, 12);
    assert.ok(!s.log.text().includes(token), 'token not logged');
    assert.ok(!s.log.text().includes(r.json.data), 'password not logged');

    const replay = await s.browser().post('/api/user/reset', { email, token });
    assert.equal(replay.json.code, 'RESET_LINK_INVALID');
    for (const x of [b, other]) assert.equal((await x.get('/api/user/sessions')).status, 401);
    const issuedAfter = await s.ctx.database.db.selectFrom('user_sessions').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(issuedAfter.n), Number(issuedBefore.n), 'revoked rows stay and still count toward issuance');
    assert.equal((await s.browser().login('rita', 'original password')).json.success, false);
    assert.equal((await s.browser().login('rita', r.json.data)).json.success, true);
  });

  test('A42 with a chosen password validates it like registration before using the token', async () => {
    smtp.messages.length = 0;
    await s.browser().get('/api/reset_password?email=sam@example.com');
    const { email, token } = linkIn((await smtp.waitFor('sam@example.com'))[0]);
    const short = await s.browser().post('/api/user/reset', { email, token, password: 'short' });
    assert.equal(short.json.code, 'RESET_PASSWORD_INVALID');
    const r = await s.browser().post('/api/user/reset', { email, token, password: 'sam chosen password' });
    assert.deepEqual(r.json, { success: true, message: '' });
    assert.equal((await s.browser().login('sam', 'sam chosen password')).json.success, true);
  });

  test('A42 refuses wrong, foreign, expired and guessed tokens', async () => {
    smtp.messages.length = 0;
    await s.browser().get('/api/reset_password?email=sam@example.com');
    const { token } = linkIn((await smtp.waitFor('sam@example.com'))[0]);
    const foreign = await s.browser().post('/api/user/reset', { email: 'rita@example.com', token });
    assert.equal(foreign.json.code, 'RESET_LINK_INVALID');
    for (const body of [{}, { email: 'sam@example.com' }, { email: 'sam@example.com', token: 'x'.repeat(300) }]) {
      const r = await s.browser().post('/api/user/reset', body);
      assert.equal(r.json.success, false);
      assert.ok(['RESET_LINK_INVALID', 'INVALID_PARAMETERS'].includes(r.json.code));
    }
    for (let i = 0; i < 5; i++) await s.browser().post('/api/user/reset', { email: 'sam@example.com', token: `wrong${i}` });
    const locked = await s.browser().post('/api/user/reset', { email: 'sam@example.com', token });
    assert.equal(locked.json.code, 'RESET_LINK_INVALID', 'five wrong guesses burn the token');

    smtp.messages.length = 0;
    await s.browser().get('/api/reset_password?email=sam@example.com');
    const fresh = linkIn((await smtp.waitFor('sam@example.com'))[0]);
    await s.ctx.database.db.updateTable('email_codes' as any).set({ expires_at: 1 } as any).execute();
    const expired = await s.browser().post('/api/user/reset', fresh);
    assert.equal(expired.json.code, 'RESET_LINK_INVALID');
  });
});
