import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { sendJson, sendSse, type Seen } from '../helpers/fake-upstream.js';
import { admit, until, walletOf } from '../helpers/runs.js';

/**
 * An upstream that serves a call but reports usage that cannot be right ("abc", negative, absurd) costs the
 * customer the tokenizer's count, at least 1: the call is answered 200, settled, and its reservation released.
 */

const START = 100_000;
/** Not a number (whole answers), a negative completion (streams). */
const NAN = { prompt_tokens: 'abc', completion_tokens: 5, total_tokens: 5 };
const NEGATIVE = { prompt_tokens: 10, completion_tokens: -1_000_000, total_tokens: -999_990 };

eachDatabase('edge: calls whose upstream reports impossible usage are settled on the counted usage', (v) => {
  let st: Stack;
  let token: string;

  before(async () => {
    st = await startStack(v, { http: v.name !== 'sqlite' });
    const chat = st.up.routes['POST /v1/chat/completions']!;
    st.up.routes['POST /v1/chat/completions'] = (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model !== 'broken-model') return chat(r, res);
      const chunk = (content: string | null, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'broken-model', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] });
      if (r.json.stream) return sendSse(res, [chunk('Hello'), chunk(' there'), chunk(null, 'stop'), { ...chunk(null), choices: [], usage: NEGATIVE }]);
      sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'broken-model', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: NAN });
    };
    st.up.routes['POST /v1/responses'] = (r: Seen, res: http.ServerResponse) =>
      sendJson(res, 200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: r.json?.model, output: [{ type: 'message', id: 'm', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] }], usage: { input_tokens: 'abc', output_tokens: 1e12 } });
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'broken-model', '--reserve', '1000')).error, null);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', String(START))).error, null);
    token = await st.edge.issueKey('acme');
  });
  after(async () => {
    await st.close();
  });

  test('whole and streamed calls answer 200, are charged ≥ 1 for the counted tokens, and release their reservation', async () => {
    const body = { model: 'broken-model', messages: [{ role: 'user', content: 'Say hello' }] };
    const whole = await st.edge.request('POST', '/v1/chat/completions', { token, body });
    assert.equal(whole.status, 200, whole.text);
    let w = await walletOf(st.edge, 'acme');
    assert.equal(w.reserved, 0, 'the reservation is released');
    const charged = START - w.balance;
    assert.ok(charged >= 1 && charged < 1000, `charged ${charged}`);
    const shown = whole.json.usage;
    assert.deepEqual([shown.prompt_tokens, shown.completion_tokens, shown.total_tokens], [charged - 5, 5, charged], 'the caller is shown the usage it was charged for (the counted prompt, the sound completion)');

    const streamed = await st.edge.request('POST', '/v1/chat/completions', { token, body: { ...body, stream: true, stream_options: { include_usage: true } } });
    assert.equal(streamed.status, 200, streamed.text);
    await until('the stream is settled', async () => (await walletOf(st.edge, 'acme')).reserved === 0 && (await walletOf(st.edge, 'acme')).balance < START - charged);
    w = await walletOf(st.edge, 'acme');
    assert.ok(START - charged - w.balance >= 1 && START - charged - w.balance < 1000);
    const usage = streamed.text.split('\n').filter((l) => l.startsWith('data: {') && l.includes('"usage"')).map((l) => JSON.parse(l.slice(6)).usage).pop();
    assert.ok(usage && Number.isSafeInteger(usage.completion_tokens) && usage.completion_tokens >= 0, `the usage chunk shows a sound completion: ${JSON.stringify(usage)}`);
    assert.equal(usage.total_tokens, START - charged - w.balance, 'the usage chunk shows what the stream was charged');
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  });

  test('an admitted run succeeds, costs ≥ 1 and releases its reservation', async () => {
    const w0 = await walletOf(st.edge, 'acme');
    const run = await admit(st.edge, token, 'broken-model', 'Say hello');
    await st.edge.worker!.tick();
    await st.edge.worker!.drain();
    const r = await st.edge.request('GET', `/v1/responses/${run.requestId}`, { token });
    assert.equal(r.json.status, 'succeeded', r.text);
    assert.ok(r.json.cost >= 1 && r.json.cost < 1000, `cost ${r.json.cost}`);
    const w = await walletOf(st.edge, 'acme');
    assert.equal(w.reserved, w0.reserved);
    assert.equal(w.balance, w0.balance - r.json.cost);
  });
});
