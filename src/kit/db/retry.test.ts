import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDatabase } from './index.js';
import { isDeadlock, transactionWithRetry } from './retry.js';

test('a transaction chosen as a deadlock victim runs again; other errors and the last attempt fail', async () => {
  const d = await openDatabase<any>('sqlite://:memory:');
  try {
    await d.db.schema.createTable('t').addColumn('n', 'integer').execute();
    let runs = 0;
    const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213, code: 'ER_LOCK_DEADLOCK' });
    const result = await transactionWithRetry(d.db, async (trx) => {
      runs++;
      await trx.insertInto('t').values({ n: runs }).execute();
      if (runs < 3) throw deadlock;
      return 'done';
    });
    assert.equal(result, 'done');
    assert.equal(runs, 3);
    // The failed attempts were rolled back: only the third insert is there.
    assert.deepEqual((await d.db.selectFrom('t').select('n').execute()).map((r) => r.n), [3]);
    runs = 0;
    await assert.rejects(transactionWithRetry(d.db, async () => { runs++; throw deadlock; }, 2), /Deadlock/);
    assert.equal(runs, 2);
    runs = 0;
    await assert.rejects(transactionWithRetry(d.db, async () => { runs++; throw new Error('other'); }), /other/);
    assert.equal(runs, 1);
    assert.ok(isDeadlock({ code: '40P01' }) && isDeadlock({ code: '40001' }) && !isDeadlock({ code: '23505' }));
  } finally {
    await d.close();
  }
});
