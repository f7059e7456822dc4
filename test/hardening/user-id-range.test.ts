import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ROLE } from '../../src/account/db.js';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import type { Browser } from '../helpers/http.js';

// Found by the fuzz on PostgreSQL: A18 and A22 took any integer, and one beyond bigint was a 500 there.
eachDatabase('user ids in admin paths beyond 2^53 - 1', (v) => {
  let s: AccountServer;
  let admin: Browser;
  before(async () => {
    s = await startAccount(v);
    await s.createUser('range-admin', 'range admin password 1', { role: ROLE.admin });
    admin = s.browser();
    assert.equal((await admin.login('range-admin', 'range admin password 1')).json.success, true);
  });
  after(() => s.close());

  test('A18, A19, A20, A21, A22: 400 INVALID_PARAMETERS, never a database error', async () => {
    for (const id of ['99999999999999999999', '9007199254740992', '1e30']) {
      for (const path of [`/api/user/${id}/2fa`, `/api/user/${id}/reset_passkey`, `/api/user/${id}/bindings/github`, `/api/user/${id}/oauth/bindings/github`]) {
        const r = await admin.delete(path);
        assert.equal(r.status, 400, `${path}: ${r.text}`);
        assert.equal(r.json.code, 'INVALID_PARAMETERS', path);
      }
      const list = await admin.get(`/api/user/${id}/oauth/bindings`);
      assert.equal(list.status, 400, list.text);
    }
    assert.ok(!s.log.text().includes('"level":50'), 'an error was logged');
  });
});
