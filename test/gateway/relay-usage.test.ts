import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, type RelayReply } from '../helpers/relay.js';

/**
 * Usage an upstream reports that cannot be right (not a number, negative, fractional, absurdly large) is
 * replaced by the tokenizer's count in every format the relay reads, the call is charged at least 1, the row
 * is logged as counted with a warning naming the channel, and no row ever blocks the relay log.
 */

const KEY = 'sk-usage-KEY-0123456789abcdef';
/** The defect each model's upstream puts in its usage: [prompt, completion]. */
const DEFECTS: Record<string, [unknown, unknown]> = {
  nan: ['abc', 5],
  neg: [10, -1_000_000],
  frac: [10.5, 5],
  huge: [10, 1e12],
};
const FAMILIES = ['chat', 'stream', 'responses', 'embed', 'anthropic', 'gemini'];
const model = (family: string, defect: string) => `${family}-${defect}`;
const MODELS = FAMILIES.flatMap((f) => [...Object.keys(DEFECTS), 'ok'].map((d) => model(f, d)));
const PRICES = { model_ratio: Object.fromEntries(MODELS.map((m) => [m, 1])), completion_ratio: {} };

const defectOf = (name: unknown): [unknown, unknown] => DEFECTS[String(name).split('-').pop()!] ?? [10, 5];

function routes(): Record<string, (r: Seen, res: http.ServerResponse) => void> {
  const chunk = (content: string | null, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] });
  return {
    'POST /openai/v1/chat/completions': (r, res) => {
      const [p, c] = defectOf(r.json.model);
      const usage = { prompt_tokens: p, completion_tokens: c, total_tokens: 15 };
      if (r.json.stream) return sendSse(res, [chunk('Hello'), chunk(' there'), chunk(null, 'stop'), { ...chunk(null), choices: [], usage }]);
      sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: r.json.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage });
    },
    'POST /openai/v1/responses': (r, res) => {
      const [p, c] = defectOf(r.json.model);
      sendJson(res, 200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: r.json.model, output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] }], usage: { input_tokens: p, output_tokens: c, total_tokens: 15 } });
    },
    'POST /openai/v1/embeddings': (r, res) => {
      const [p] = defectOf(r.json.model);
      const [, c] = defectOf(r.json.model);
      // Embeddings have only prompt tokens: the completion's defect goes there too.
      sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: r.json.model, usage: { prompt_tokens: p === 10 ? c : p, total_tokens: 7 } });
    },
    'POST /anthropic/v1/messages': (r, res) => {
      const [p, c] = defectOf(r.json.model);
      sendJson(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', model: r.json.model, content: [{ type: 'text', text: 'Hello there' }], stop_reason: 'end_turn', usage: { input_tokens: p, output_tokens: c } });
    },
  };
}

function geminiRoute(up: FakeUpstream) {
  // Gemini's path holds the model: one route per model.
  for (const m of MODELS.filter((x) => x.startsWith('gemini-'))) {
    up.routes[`POST /gemini/v1beta/models/${m}:generateContent`] = (r, res) => {
      const [p, c] = defectOf(m);
      sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: p, candidatesTokenCount: c, totalTokenCount: 15 }, modelVersion: m });
    };
  }
}

/** One call of `family` for `m` through the relay's HTTP API. */
function call(s: GatewayServer, family: string, m: string) {
  const messages = [{ role: 'user', content: 'Say hello to everyone in the room' }];
  switch (family) {
    case 'chat':
      return relay(s.url, '/chat/completions', { model: m, messages });
    case 'stream':
      return relay(s.url, '/chat/completions', { model: m, messages, stream: true, stream_options: { include_usage: true } });
    case 'responses':
      return relay(s.url, '/responses', { model: m, input: 'Say hello to everyone in the room' });
    case 'embed':
      return relay(s.url, '/embeddings', { model: m, input: 'Say hello to everyone in the room' });
    case 'anthropic':
      return relay(s.url, '/messages', { model: m, max_tokens: 100, messages });
    default:
      return relay(s.url, `/relay/v1beta/models/${m}:generateContent`, { contents: [{ role: 'user', parts: [{ text: 'Say hello to everyone in the room' }] }] });
  }
}

/** The usage the caller was shown, in its format's own fields: [prompt, completion, total]. */
function shownUsage(family: string, r: RelayReply): unknown[] {
  switch (family) {
    case 'stream': {
      const u = r.events.filter((e) => e?.usage).pop()?.usage;
      return [u?.prompt_tokens, u?.completion_tokens, u?.total_tokens];
    }
    case 'responses':
    case 'anthropic':
      return [r.json.usage.input_tokens, r.json.usage.output_tokens, family === 'responses' ? r.json.usage.total_tokens : r.json.usage.input_tokens + r.json.usage.output_tokens];
    case 'embed':
      return [r.json.usage.prompt_tokens, 0, r.json.usage.total_tokens];
    case 'gemini': {
      const u = r.json.usageMetadata;
      return [u.promptTokenCount, u.candidatesTokenCount, u.totalTokenCount];
    }
    default:
      return [r.json.usage.prompt_tokens, r.json.usage.completion_tokens, r.json.usage.total_tokens];
  }
}

eachDatabase('relay: usage from an upstream is checked', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  const channels: Record<string, number> = {};

  before(async () => {
    up = await startFakeUpstream(routes());
    geminiRoute(up);
    s = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0' } });
    const root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent(PRICES);
    const add = async (family: string, type: number, base: string) => {
      const models = MODELS.filter((m) => m.startsWith(`${family}-`)).join(',');
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name: `ch-${family}`, base_url: `${up.url}${base}`, models, key: KEY, group: 'default' } });
      assert.equal(r.status, 200, r.text);
      channels[family] = r.json.data.ids[0];
    };
    for (const f of ['chat', 'stream', 'responses', 'embed']) await add(f, 1, '/openai');
    await add('anthropic', 14, '/anthropic');
    await add('gemini', 24, '/gemini');
  });
  after(async () => {
    assert.ok(!s.everything().includes(KEY), 'an upstream key leaked into an answer or a log line');
    await s.close();
    await up.close();
  });

  for (const family of FAMILIES) {
    test(`${family}: non-numbers, negatives, fractions and absurd values are counted instead, charged ≥ 1, logged as counted`, async () => {
      const summaries = [];
      for (const defect of Object.keys(DEFECTS)) {
        const m = model(family, defect);
        const r = await call(s, family, m);
        assert.equal(r.status, 200, `${m}: ${r.text}`);
        const u = r.summary.usage;
        for (const k of ['prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'total_tokens']) {
          assert.ok(Number.isSafeInteger(u[k]) && u[k] >= 0 && u[k] < 1000, `${m}: ${k} = ${u[k]}`);
        }
        assert.equal(u.counted, true, `${m}: the usage is the tokenizer's`);
        assert.ok(u.prompt_tokens > 0, `${m}: the prompt is counted`);
        assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
        assert.equal(r.summary.quota, u.prompt_tokens + u.completion_tokens, `${m}: charged for the counted tokens`);
        assert.deepEqual(shownUsage(family, r), [u.prompt_tokens, u.completion_tokens, u.total_tokens], `${m}: the caller is shown the usage it was billed for`);
        summaries.push(r.summary);
        assert.ok(s.log.lines.some((l) => l.includes('"level":40') && l.includes(`"channelId":${channels[family]}`) && l.includes(m)), `${m}: a warning names the channel`);
      }
      const good = await call(s, family, model(family, 'ok'));
      assert.equal(good.status, 200, good.text);
      assert.equal(good.summary.usage.counted, false, 'sound usage is the upstream\'s');
      assert.deepEqual(shownUsage(family, good), family === 'embed' ? [5, 0, 7] : [10, 5, 15], 'sound usage reaches the caller as the upstream wrote it');

      await s.relay.log.flush();
      for (const sm of [...summaries, good.summary]) {
        const row = await s.ctx.db.selectFrom('relay_log').selectAll().where('request_id', '=', sm.request_id).executeTakeFirst();
        assert.ok(row, `${sm.model}: logged`);
        assert.equal(Number(row.quota), sm.quota);
        assert.equal(Number(row.usage_counted), sm.usage.counted ? 1 : 0);
      }
    });
  }

  test('a row the database refuses is set aside: the others of its batch are written, and later rows too', async () => {
    const ok = await call(s, 'chat', model('chat', 'ok'));
    const caller = { caller: { issuer: 'edge', subject: 'acme', group: 'default' }, format: 'chat' as const, stream: false };
    // A row no database takes: a value that does not fit its column.
    s.relay.log.record({ ...ok.summary, request_id: 'poison', quota: Number.NaN }, caller);
    s.relay.log.record({ ...ok.summary, request_id: 'beside-poison' }, caller);
    await s.relay.log.flush();
    assert.ok(await s.ctx.db.selectFrom('relay_log').select('id').where('request_id', '=', 'beside-poison').executeTakeFirst(), 'the good row of the batch is written at once');
    // The refused row is tried at the next flushes (a passing lock timeout would be written), then set aside.
    assert.equal(s.relay.log.rejected, 0);
    await s.relay.log.flush();
    await s.relay.log.flush();
    const later = await call(s, 'chat', model('chat', 'ok'));
    await s.relay.log.flush();
    const ids = (await s.ctx.db.selectFrom('relay_log').select('request_id').where('request_id', 'in', ['poison', 'beside-poison', later.summary.request_id]).execute()).map((r) => r.request_id);
    assert.deepEqual(ids.sort(), ['beside-poison', later.summary.request_id].sort());
    assert.equal(s.relay.log.rejected, 1);
    const metrics = await (await fetch(`${s.url}/metrics`, s.ctx.config.opsToken ? { headers: { authorization: `Bearer ${s.ctx.config.opsToken}` } } : {})).text();
    assert.ok(/^relay_log_rows_rejected_total(\{[^}]*\})? 1$/m.test(metrics), 'the set-aside row is counted in the metrics');
  });
});
