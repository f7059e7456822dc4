import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';

eachDatabase('A41 register', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
  });
  after(() => s.close());
  const register = (body: unknown) => s.browser().post('/api/user/register', body);

  test('a new user can register and then log in', async () => {
    const r = await register({ username: 'newbie', password: 'newbie password', email: 'Newbie@Example.com' });
    assert.deepEqual(r.json, { success: true, message: '' });
    const login = await s.browser().login('newbie@example.com', 'newbie password');
    assert.equal(login.json.success, true);
    assert.equal(login.json.data.user.email, 'newbie@example.com');
  });

  test('validation failures keep HTTP 200 with a readable message and create nothing', async () => {
    const before = await s.ctx.database.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const body of [
      {},
      { username: '', password: 'long enough pw' },
      { username: 'short', password: 'short' },
      { username: 'x'.repeat(21), password: 'long enough pw' },
      { username: 'has space', password: 'long enough pw' },
      { username: 'okname', password: 'long enough pw', email: 'not-an-email' },
      { username: 'okname', password: 'p'.repeat(129) },
    ]) {
      const r = await register(body);
      assert.equal(r.status, 200);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'REGISTER_INVALID_INPUT');
    }
    const typed = await register({ username: ['a'], password: 12345678 });
    assert.equal(typed.status, 400);
    const after = await s.ctx.database.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  test('usernames and emails are unique, also under concurrent registration', async () => {
    await register({ username: 'taken', password: 'taken password', email: 'taken@example.com' });
    assert.equal((await register({ username: 'taken', password: 'another password' })).json.code, 'USERNAME_TAKEN');
    assert.equal((await register({ username: 'other', password: 'another password', email: 'taken@example.com' })).json.code, 'EMAIL_TAKEN');
    const racers = await Promise.all(Array.from({ length: 8 }, () => register({ username: 'racer', password: 'racer password' })));
    assert.equal(racers.filter((r) => r.json.success).length, 1);
    assert.ok(racers.filter((r) => !r.json.success).every((r) => r.json.code === 'USERNAME_TAKEN'));
  });

  test('aff_code links the new user to the inviter', async () => {
    const inviterId = await s.createUser('inviter', 'inviter password');
    const inviter = await s.ctx.database.db.selectFrom('users').select('aff_code').where('id', '=', inviterId).executeTakeFirstOrThrow();
    await register({ username: 'invitee', password: 'invitee password', aff_code: inviter.aff_code });
    const invitee = await s.ctx.database.db.selectFrom('users').select('inviter_id').where('username', '=', 'invitee').executeTakeFirstOrThrow();
    assert.equal(Number(invitee.inviter_id), inviterId);
  });

  test('the password is stored as argon2id and never echoed or logged', async () => {
    const r = await register({ username: 'secretive', password: 'very secret words' });
    assert.ok(!r.text.includes('very secret words'));
    const row = await s.ctx.database.db.selectFrom('users').select('password_hash').where('username', '=', 'secretive').executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^\$argon2id\$/);
    assert.ok(!s.log.text().includes('very secret words'));
  });
});

eachDatabase('A41 switches', (v) => {
  test('registration disabled, password registration disabled, email verification required', async () => {
    for (const [env, code] of [
      [{ REGISTER_ENABLED: 'false' }, 'REGISTER_DISABLED'],
      [{ PASSWORD_REGISTER_ENABLED: 'false' }, 'PASSWORD_REGISTER_DISABLED'],
      [{ EMAIL_VERIFICATION_ENABLED: 'true' }, 'REGISTER_EMAIL_VERIFICATION_REQUIRED'],
    ] as const) {
      const s = await startAccount(v, { env });
      try {
        const r = await s.browser().post('/api/user/register', { username: 'someone', password: 'someone password' });
        assert.equal(r.json.success, false);
        assert.equal(r.json.code, code);
        const n = await s.ctx.database.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        assert.equal(Number(n.n), 0);
      } finally {
        await s.close();
      }
    }
  });
});
