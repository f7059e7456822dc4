import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UPSTREAM_KEY } from '../../helpers/stack.js';
import { balanceOf, CALL_COST, CALL_TOKENS, createToken, eventually, MODELS, tokenOf, type Customer, type Product } from '../stack.js';

const now = () => Math.floor(Date.now() / 1000);

/** Reads the SSE body of a streamed call into its text. */
function streamedText(body: string): string {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
}

/** A customer's key calls the edge: the exact charge on the wallet and the token, the usage log, stats and charts, prices. */
export function chargeCases(product: () => Product) {
  let c: Customer;
  let token: { id: number; key: string };
  let started: number;
  const FUNDS = 1_000_000;
  const LIMIT = 5000;

  test('a call with the key is relayed and charged to the unit: wallet quota, used_quota, request_count and the token\'s remain and used', async () => {
    const p = product();
    c = await p.register('payer');
    await p.fund(c, FUNDS);
    assert.deepEqual(await balanceOf(c), { quota: FUNDS, used_quota: 0, request_count: 0 });
    token = await createToken(p, c, 'sdk', { unlimited_quota: false, remain_quota: LIMIT });
    started = now();
    const upstreamBefore = p.upstreamCalls();

    const r = await p.chat(token.key);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, 'Hello there');
    assert.equal(p.upstreamCalls(), upstreamBefore + 1);
    const seen = p.up.to('/v1/chat/completions').at(-1)!;
    assert.equal(seen.headers.authorization, `Bearer ${UPSTREAM_KEY}`, 'the upstream gets the channel\'s key, never the customer\'s');

    const after = await eventually(() => balanceOf(c), (b) => b.request_count === 1, 'the call is settled');
    assert.deepEqual(after, { quota: FUNDS - CALL_COST, used_quota: CALL_COST, request_count: 1 });
    const t = await tokenOf(c, token.id);
    assert.equal(t.used_quota, CALL_COST);
    assert.equal(t.remain_quota, LIMIT - CALL_COST);
    assert.ok(t.accessed_time >= started && t.accessed_time <= now(), `accessed_time ${t.accessed_time}`);
    assert.equal(t.status, 1);
  });

  test('a streamed call is charged the same, once, after its last byte', async () => {
    const p = product();
    const r = await p.chat(token.key, { stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200, r.text);
    assert.equal(streamedText(r.text), 'Hello there');
    const after = await eventually(() => balanceOf(c), (b) => b.request_count === 2, 'the stream is settled');
    assert.deepEqual(after, { quota: FUNDS - 2 * CALL_COST, used_quota: 2 * CALL_COST, request_count: 2 });
    const t = await tokenOf(c, token.id);
    assert.equal(t.used_quota, 2 * CALL_COST);
    assert.equal(t.remain_quota, LIMIT - 2 * CALL_COST);
  });

  test('GET /api/log/self: one consume row (type 2) per call with new-api\'s fields; its filters', async () => {
    const r = await c.web.get('/api/log/self?type=2&p=1&page_size=10');
    assert.equal(r.json?.success, true, r.text);
    assert.equal(r.json.data.total, 2, r.text);
    const [streamed, plain] = r.json.data.items;
    for (const row of [streamed, plain]) {
      assert.equal(row.type, 2);
      assert.equal(row.user_id, c.id);
      assert.equal(row.model_name, MODELS.chat);
      assert.equal(row.token_name, 'sdk');
      assert.equal(row.quota, CALL_COST);
      assert.equal(row.prompt_tokens, 100);
      assert.equal(row.completion_tokens, 20);
      assert.ok(Number.isInteger(row.use_time) && row.use_time >= 0 && row.use_time < 60, `use_time ${row.use_time}`);
      assert.ok(row.created_at >= started - 1 && row.created_at <= now() + 1, `created_at ${row.created_at}`);
    }
    assert.equal(streamed.is_stream, true, 'newest first: the streamed call');
    assert.equal(plain.is_stream, false);
    assert.ok(!r.text.includes(token.key), 'the log never carries the key');

    const count = async (query: string) => {
      const q = await c.web.get(`/api/log/self?type=2&${query}`);
      assert.equal(q.json?.success, true, q.text);
      return q.json.data.total;
    };
    assert.equal(await count('token_name=sdk'), 2);
    assert.equal(await count('token_name=nope'), 0);
    assert.equal(await count(`model_name=${MODELS.chat}`), 2);
    assert.equal(await count(`model_name=${MODELS.embedding}`), 0);
    assert.equal(await count(`start_timestamp=${started - 5}&end_timestamp=${now() + 5}`), 2);
    assert.equal(await count(`start_timestamp=${now() + 3600}`), 0);
    assert.equal(await count(`end_timestamp=${started - 3600}`), 0);
    assert.equal((await c.web.get('/api/log/self?type=2&p=2&page_size=1')).json.data.items.length, 1, 'paged');
  });

  test('GET /api/log/self/stat and /api/data/self count the calls, their units and tokens', async () => {
    const stat = await c.web.get(`/api/log/self/stat?type=2&start_timestamp=${started - 5}&end_timestamp=${now() + 5}`);
    assert.equal(stat.json?.success, true, stat.text);
    assert.equal(stat.json.data.quota, 2 * CALL_COST);
    assert.equal(stat.json.data.rpm, 2);
    assert.equal(stat.json.data.tpm, 2 * CALL_TOKENS);

    const data = await c.web.get(`/api/data/self?start_timestamp=${now() - 86_400}&end_timestamp=${now() + 3600}`);
    assert.equal(data.json?.success, true, data.text);
    const rows = data.json.data as any[];
    assert.ok(rows.length >= 1, data.text);
    assert.ok(rows.every((b) => b.model_name === MODELS.chat && b.user_id === c.id), data.text);
    assert.equal(rows.reduce((n, b) => n + b.count, 0), 2);
    assert.equal(rows.reduce((n, b) => n + b.quota, 0), 2 * CALL_COST);
    assert.equal(rows.reduce((n, b) => n + b.token_used, 0), 2 * CALL_TOKENS);
    for (const b of rows) assert.equal(b.created_at % 3600, 0, 'hourly buckets');
  });

  test('GET /api/pricing (public) and /api/user/models list the enabled public models only, with the gateway\'s ratios', async () => {
    const p = product();
    const res = await fetch(`${p.accountUrl}/api/pricing`);
    const pricing = (await res.json()) as any;
    assert.equal(res.status, 200);
    assert.equal(pricing.success, true, JSON.stringify(pricing));
    const names = (pricing.data as any[]).map((m) => m.model_name).sort();
    assert.deepEqual(names, [MODELS.chat, MODELS.embedding].sort(), 'a disabled public model and a gateway-only model are not priced');
    const chat = pricing.data.find((m: any) => m.model_name === MODELS.chat);
    assert.equal(chat.quota_type, 0);
    assert.equal(chat.model_ratio, 2);
    assert.equal(chat.completion_ratio, 3);
    assert.ok(Array.isArray(chat.enable_groups) && chat.enable_groups.includes('default'), JSON.stringify(chat));
    assert.equal(typeof pricing.group_ratio, 'object', 'the group ratios beside the models');
    assert.equal(pricing.group_ratio.default ?? 1, 1);

    const models = await c.web.get('/api/user/models');
    assert.equal(models.json?.success, true, models.text);
    assert.deepEqual([...models.json.data].sort(), [MODELS.chat, MODELS.embedding].sort());
    const groups = await c.web.get('/api/user/self/groups');
    assert.equal(groups.json?.success, true, groups.text);
    assert.ok('default' in groups.json.data, groups.text);
  });
}
