import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDatabase } from './index.js';
import { AppError } from '../http/errors.js';
import { isDeadlock, isLockTimeout, transactionWithRetry } from './retry.js';

test('a transaction chosen as a deadlock victim runs again; other errors fail as they are, the last attempt and a lock wait timeout as SERVICE_UNAVAILABLE', async () => {
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
    // Still a deadlock on the last attempt, or a lock wait that timed out (run once): a catalogued 503.
    const busy = (e: unknown) => e instanceof AppError && e.code === 'SERVICE_UNAVAILABLE' && e.options.headers?.['Retry-After'] === '1';
    await assert.rejects(transactionWithRetry(d.db, async () => { runs++; throw deadlock; }, 2), (e) => busy(e) && (e as Error).cause === deadlock);
    assert.equal(runs, 2);
    runs = 0;
    const timeout = Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205, code: 'ER_LOCK_WAIT_TIMEOUT' });
    await assert.rejects(transactionWithRetry(d.db, async () => { runs++; throw timeout; }), busy);
    assert.equal(runs, 1);
    runs = 0;
    await assert.rejects(transactionWithRetry(d.db, async () => { runs++; throw new Error('other'); }), /other/);
    assert.equal(runs, 1);
    assert.ok(isDeadlock({ code: '40P01' }) && isDeadlock({ code: '40001' }) && !isDeadlock({ code: '23505' }));
    assert.ok(isLockTimeout({ code: '55P03' }) && !isLockTimeout(deadlock) && !isDeadlock(timeout));
  } finally {
    await d.close();
  }
});
