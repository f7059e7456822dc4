import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gatewayOperations } from '../../src/gateway/app.js';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

// The relay's internal API (workload tokens, OpenAI error shape) has its own fuzz target (fuzz-gateway.test.ts).
const implemented = gatewayOperations().filter((o) => o.state === 'implemented' && o.spec.auth !== 'workload').map((o) => o.spec);

const BODIES: unknown[] = ['{"broken', '[]', '"text"', '123', 'null', { ids: 'x' }, { id: -1 }, { id: 'abc' }, { status: 'on' }, { channel_id: 1e20 }, { tag: 5 }, { mode: ['single'] }, { name: 'x'.repeat(100), type: 'y' }];
const IDS = ['0', '-5', 'abc', '99999999999999999999', '1.5', '999999'];

eachDatabase('gateway bad input never answers 5xx', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
    await root.post('/api/channel/', { mode: 'multi_to_single', channel: { type: 1, name: 'c', models: 'm', key: 'sk-bad-input-1\nsk-bad-input-2' } });
  });
  after(async () => {
    assert.ok(!s.everything().includes('sk-bad-input-'), 'key leaked');
    await s.close();
  });

  test('malformed bodies, wrong types, bad ids and queries: a clear envelope with a 4xx status', async () => {
    let calls = 0;
    for (const spec of implemented) {
      const paths = spec.path.includes(':id') ? IDS.map((id) => spec.path.replace(':id', id)) : [spec.path];
      for (const path of paths) {
        const queries = spec.method === 'GET' ? ['', '?p=x&page_size=-5&type=abc&status=%00&tag_mode=maybe', '?keyword=%25_%5C&sort_by=drop%20table&p=999999'] : [''];
        for (const q of queries) {
          const bodies = spec.method === 'GET' || spec.method === 'DELETE' ? [undefined] : BODIES;
          for (const b of bodies) {
            const r = await root.request(spec.method, path + q, b);
            calls++;
            assert.ok(r.status < 500, `${spec.id} ${spec.method} ${path + q} ${JSON.stringify(b)} → ${r.status} ${r.text}`);
            assert.equal(typeof r.json?.success, 'boolean', `${spec.id} envelope: ${r.text}`);
            if (!r.json.success) assert.match(r.json.code, /^[A-Z_]+$/, `${spec.id} code`);
          }
        }
      }
    }
    assert.ok(calls > 150, `${calls} calls`);
    assert.ok(!s.log.text().includes('"level":50'), 'an unhandled error was logged');
  });

  async function channelCount() {
    return Number((await s.ctx.db.selectFrom('channels').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  }

  test('a NUL character in a body, query or path value: 400 INVALID_PARAMETERS, nothing written', async () => {
    const before = await channelCount();
    const id = (await s.ctx.db.selectFrom('channels').select('id').executeTakeFirstOrThrow()).id;
    const calls: [string, string, unknown?][] = [
      ['POST', '/api/channel/', { mode: 'single', channel: { type: 1, name: 'a\u0000b', models: 'm', key: 'sk-x' } }],
      ['POST', '/api/channel/', { mode: 'single', channel: { type: 1, name: 'n', models: 'm', key: 'sk-x', 'x\u0000': 1 } }],
      ['PUT', '/api/channel/', { id, remark: '\u0000' }],
      ['POST', '/api/channel/batch/tag', { ids: [id], tag: 't\u0000' }],
      ['POST', `/api/channel/copy/${id}?suffix=%00`],
      ['POST', '/api/prefill_group/', { name: 'g\u0000', type: 'model', items: [] }],
      ['GET', '/api/channel/?group=a%00b'],
      ['GET', '/api/channel/search?keyword=a%00b'],
      ['GET', '/api/channel/search?model=a%00b'],
      ['GET', '/api/channel/tag/models?tag=%00'],
      ['GET', '/api/prefill_group/?type=%00'],
    ];
    for (const [method, path, body] of calls) {
      const r = await root.request(method, path, body);
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.equal(r.json.code, 'INVALID_PARAMETERS', `${method} ${path}`);
    }
    assert.equal(await channelCount(), before);
  });

  test('text longer than its column: 400 CHANNEL_INVALID, nothing written', async () => {
    const before = await channelCount();
    const group = Array.from({ length: 6 }, (_, i) => `${i}`.padEnd(61, 'g')).join(',');
    let r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'long-group', models: 'm', key: 'sk-x', group } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'CHANNEL_INVALID');
    r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'n'.repeat(255), models: 'm', key: 'sk-x', tag: 'long-tag' } });
    assert.equal(r.status, 200, r.text);
    const longName = (await s.ctx.db.selectFrom('channels').select('id').where('tag', '=', 'long-tag').executeTakeFirstOrThrow()).id;
    r = await root.post(`/api/channel/copy/${longName}?suffix=_copy`);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'CHANNEL_INVALID');
    r = await root.put('/api/channel/tag', { tag: 'long-tag', new_tag: 'T'.repeat(400) });
    assert.equal(r.status, 400, r.text);
    r = await root.put('/api/channel/tag', { tag: 'long-tag', groups: group });
    assert.equal(r.status, 400, r.text);
    // 1,200 models in 85 groups would be 102,000 ability rows for one channel.
    const groups85 = Array.from({ length: 85 }, (_, i) => `${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}`).join(',');
    const models1200 = Array.from({ length: 1200 }, (_, i) => `m${i}`).join(',');
    r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'wide', models: models1200, key: 'sk-x', group: groups85 } });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /100000/);
    r = await root.put('/api/channel/tag', { tag: 'long-tag', groups: groups85, models: models1200 });
    assert.equal(r.status, 400, r.text);
    const row = await s.ctx.db.selectFrom('channels').select(['tag', 'group']).where('id', '=', longName).executeTakeFirstOrThrow();
    assert.deepEqual(row, { tag: 'long-tag', group: 'default' });
    assert.equal(await channelCount(), before + 1);
  });
});
