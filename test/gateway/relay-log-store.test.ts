import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { migrate, openDatabase } from '../../src/kit/db/index.js';
import type { GatewayDB } from '../../src/gateway/db.js';
import { gatewayMigrations } from '../../src/gateway/migrations/index.js';
import { insertLogRows, type RelayLogRow } from '../../src/gateway/relay/log-store.js';
import { eachDatabase, freshDatabase, tempDir } from '../helpers/services.js';

function row(i: number): RelayLogRow {
  return {
    created_at: 1_700_000_000_000 + i,
    request_id: `req-${i}`,
    caller: 'edge:owner',
    caller_group: 'default',
    format: 'chat',
    stream: i % 2,
    model: 'm',
    upstream_model: 'm-up',
    channel_id: i % 3 === 0 ? null : 7,
    key_index: i % 5 === 0 ? 2 : null,
    status: i % 7 === 0 ? 502 : 200,
    error_code: i % 7 === 0 ? 'relay_upstream_error' : null,
    prompt_tokens: i,
    completion_tokens: 2 * i,
    cached_tokens: 0,
    reasoning_tokens: 1,
    quota: 10 * i,
    cost: i / 100,
    first_byte_ms: i % 4 === 0 ? null : i,
    total_ms: i + 3,
    retries: 0,
    attempts: JSON.stringify([{ channel_id: 7, status: 200 }]),
    usage_counted: i % 2,
    error_detail: i % 7 === 0 ? `detail ${i}` : null,
  };
}

eachDatabase('relay log rows', (v) => {
  test('a flush of many rows (whole batches and a rest written one by one) stores every row with every column', async () => {
    const schema = freshDatabase(v, path.join(tempDir(), 'gateway.sqlite'));
    const database = await openDatabase<GatewayDB>(schema.url);
    try {
      await migrate(database, 'gateway', gatewayMigrations(database.dialect));
      const rows = Array.from({ length: 123 }, (_, i) => row(i));
      await database.db.transaction().execute((trx) => insertLogRows(trx, rows));
      await insertLogRows(database.db, [row(123)]);
      const stored = await database.db.selectFrom('relay_log').selectAll().orderBy('id').execute();
      assert.equal(stored.length, 124);
      const normal = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'id').map(([k, val]) => [k, typeof val === 'bigint' || (typeof val === 'string' && /^\d+(\.\d+)?$/.test(val) && k !== 'request_id') ? Number(val) : val]));
      assert.deepEqual(stored.map(normal), [...rows, row(123)].map(normal));
    } finally {
      await database.close();
      await schema.drop();
    }
  });
});
