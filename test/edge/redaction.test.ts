import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { variants } from '../helpers/services.js';
import { RATIOS, startStack, UPSTREAM_KEY, type Stack } from '../helpers/stack.js';
import { relay } from '../helpers/relay.js';
import { sendJson, type Seen } from '../helpers/fake-upstream.js';
import { admit } from '../helpers/runs.js';

/**
 * What customers are told. An upstream error (a 400, which no breaker counts) that echoes the channel key in another spelling (upper-cased, without its `sk-` prefix,
 * percent-encoded, base64 inside a Basic credential) reaches no customer: not a whole answer, not a stream,
 * not a run read back with GET /v1/responses/{id}, not a log line. Redaction is by the key's identity.
 * And a customer-facing error names no setting, address, group or channel: staff read those in the relay log.
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
      assert.match(r.text, /"code":"relay_stream_interrupted"/);
      assertClean(r.text, `stream (${variant})`);
      // Staff read the upstream's words, redacted, in the relay log.
      await st.gateway.relay.log.flush();
      const row = await st.gateway.ctx.db.selectFrom('relay_log').select('error_detail').where('error_code', '=', 'relay_stream_interrupted').orderBy('id', 'desc').executeTakeFirstOrThrow();
      assert.match(row.error_detail ?? '', /Incorrect API key provided: (Bearer )?\[redacted\]/);
      assertClean(row.error_detail ?? '', `relay log (${variant})`);
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

  test('customer-facing errors name no settings, addresses, groups or channels; staff find them in the logs', async () => {
    const root = await st.gateway.staff('errors-root', 'root');
    const add = async (name: string, base: string, models: string) => {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: base, models, key: 'sk-other-0123456789', group: 'default' } });
      assert.equal(r.status, 200, r.text);
    };
    // An address the gateway may not reach (only 127.0.0.1 is allowed), a model without a price, one nobody serves.
    await add('private', 'http://10.255.255.1:9', 'private-model');
    await add('unpriced', st.up.url, 'unpriced-model');
    await st.gateway.services.ratios.setCurrent({ ...RATIOS, model_ratio: { ...RATIOS.model_ratio, 'private-model': 1, 'nobody-model': 1 } });
    for (const m of ['private-model', 'unpriced-model', 'nobody-model']) assert.equal((await st.edge.cli('edge', 'model', 'set', m, '--reserve', '100')).error, null);
    const internals = /10\.255|127\.0\.0\.1|GATEWAY_|not allowed|group|channel|ratio|The upstream [^:]*: The upstream/i;
    const expected: Record<string, [number, string]> = {
      'private-model': [502, 'relay_upstream_unreachable'],
      'unpriced-model': [503, 'relay_model_unpriced'],
      'nobody-model': [503, 'relay_no_channel'],
    };
    for (const [m, [status, code]] of Object.entries(expected)) {
      const body = { model: m, messages: [{ role: 'user', content: 'hi' }] };
      const atEdge = await st.edge.request('POST', '/v1/chat/completions', { token, body });
      const atRelay = await relay(st.gateway.url, '/chat/completions', body);
      for (const [where, r] of [['edge', atEdge], ['relay', atRelay]] as const) {
        assert.equal(r.status, status, `${where} ${m}: ${r.text}`);
        assert.equal(r.json.error.code, code, `${where} ${m}`);
        assert.ok(!internals.test(r.json.error.message), `${where} ${m}: ${r.json.error.message}`);
      }
    }
    await st.gateway.relay.log.flush();
    const row = await st.gateway.ctx.db.selectFrom('relay_log').select('error_detail').where('model', '=', 'private-model').executeTakeFirstOrThrow();
    assert.match(row.error_detail ?? '', /^relay_upstream_unreachable: address of 10\.255\.255\.1 is not allowed/);
    assert.match(st.gateway.log.text(), /GATEWAY_RELAY_ALLOW_UNPRICED/, 'the gateway log tells staff how to price the model');
  });
});
