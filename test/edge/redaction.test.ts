import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { variants } from '../helpers/services.js';
import { RATIOS, startStack, UPSTREAM_KEY, type Stack } from '../helpers/stack.js';
import { sendJson, type Seen } from '../helpers/fake-upstream.js';
import { admit } from '../helpers/runs.js';

/**
 * An upstream error (a 400, which no breaker counts) that echoes the channel key in another spelling (upper-cased, without its `sk-` prefix,
 * percent-encoded, base64 inside a Basic credential) reaches no customer: not a whole answer, not a stream,
 * not a run read back with GET /v1/responses/{id}, not a log line. Redaction is by the key's identity.
 */

const VARIANTS: Record<string, string> = {
  upper: UPSTREAM_KEY.toUpperCase(),
  bare: UPSTREAM_KEY.replace(/^sk-/, ''),
  percent: UPSTREAM_KEY.replace(/-/g, '%2D'),
  lowerhex: UPSTREAM_KEY.replace(/-/g, '%2d').replace(/K/g, '%4B'),
  base64: Buffer.from(`user:${UPSTREAM_KEY}`).toString('base64'),
  bearer: `Bearer ${UPSTREAM_KEY.replace(/^sk-/, 'Sk-')}`,
};
/** The part of the key no spelling changes, in any case. */
const CORE = /0123456789/i;
const leak = (variant: string) => `Incorrect API key provided: ${VARIANTS[variant]}. You can find your API key at https://example.com/keys.`;
const variantOf = (r: Seen) => String(r.json?.input ?? r.json?.messages?.[0]?.content ?? 'upper');

function assertClean(text: string, where: string) {
  for (const [name, v] of Object.entries(VARIANTS)) assert.ok(!text.includes(v), `${where}: the ${name} spelling of the key leaked`);
  assert.ok(!CORE.test(text), `${where}: a piece of the key leaked: ${text.slice(0, 400)}`);
}

describe('upstream key variants are redacted everywhere a customer looks [sqlite]', () => {
  let st: Stack;
  let token: string;

  before(async () => {
    // Each variant breaks a stream after output: no breaker, so the one channel keeps serving them all.
    st = await startStack(variants()[0]!, { http: true, gatewayEnv: { GATEWAY_BREAKER_ENABLED: 'false' } });
    const chat = st.up.routes['POST /v1/chat/completions']!;
    st.up.routes['POST /v1/chat/completions'] = (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model !== 'broken-model') return chat(r, res);
      if (!r.json.stream) return sendJson(res, 400, { error: { message: leak(variantOf(r)), type: 'invalid_request_error' } });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'broken-model', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] })}\n\n`);
      // Later, so the caller's stream has begun: the error ends it in-band.
      setTimeout(() => res.end(`data: ${JSON.stringify({ error: { message: leak(variantOf(r)), type: 'server_error' } })}\n\n`), 100);
    };
    const responses = st.up.routes['POST /v1/responses']!;
    st.up.routes['POST /v1/responses'] = (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model !== 'broken-model') return responses(r, res);
      sendJson(res, 400, { error: { message: leak(variantOf(r)), type: 'invalid_request_error' } });
    };
    await st.gateway.services.ratios.setCurrent(RATIOS);
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'broken-model', '--reserve', '100')).error, null);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100000')).error, null);
    token = await st.edge.issueKey('acme');
  });
  after(async () => {
    assertClean(st.edge.everything(), 'the edge (answers and log)');
    assertClean(st.gateway.everything(), 'the gateway (answers and log)');
    await st.close();
  });

  test('whole answers', async () => {
    for (const variant of Object.keys(VARIANTS)) {
      const r = await st.edge.request('POST', '/v1/chat/completions', { token, body: { model: 'broken-model', messages: [{ role: 'user', content: variant }] } });
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, /\[redacted\]/);
      assertClean(r.text, `answer (${variant})`);
    }
  });

  test('streams', async () => {
    for (const variant of Object.keys(VARIANTS)) {
      const r = await st.edge.request('POST', '/v1/chat/completions', { token, body: { model: 'broken-model', stream: true, messages: [{ role: 'user', content: variant }] } });
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, /Hel/);
      assert.match(r.text, /\[redacted\]/);
      assertClean(r.text, `stream (${variant})`);
    }
  });

  test('runs read back with GET /v1/responses/{id}', async () => {
    for (const variant of Object.keys(VARIANTS)) {
      const run = await admit(st.edge, token, 'broken-model', variant);
      await st.edge.worker!.tick();
      await st.edge.worker!.drain();
      const r = await st.edge.request('GET', `/v1/responses/${run.requestId}`, { token });
      assert.equal(r.json.status, 'failed', r.text);
      assertClean(r.text, `run read back (${variant})`);
    }
  });
});
