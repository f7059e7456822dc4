import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gatewayOperations } from '../../src/gateway/app.js';
import { upstreamErrors } from '../../src/contract/errors/upstream.js';
import { RELAY_ENV, relayToken } from '../helpers/relay.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { assertFuzzClean, fuzzVariants, type FuzzTarget } from './fuzz-run.js';

const UPSTREAM_KEY = 'sk-fuzz-upstream-key-7f3a9c2e1b';
const IONET_KEY = 'io-fuzz-provider-key-4d8e2a';

for (const variant of fuzzVariants()) {
  describe(`fuzz of every gateway operation [${variant.name}]`, () => {
    let s: GatewayServer;
    let up: FakeUpstream;
    let target: FuzzTarget;
    let relayTarget: FuzzTarget;

    before(async () => {
      // Every outbound call (channels, io.net, coder OAuth) goes to a local fake that answers 404 JSON.
      const chat = { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
      up = await startFakeUpstream({ 'POST /v1/chat/completions': (r, res) => (r.json?.stream ? sendSse(res, [{ ...chat, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] }]) : sendJson(res, 200, chat)) });
      s = await startGateway(variant, {
        env: {
          GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
          GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
          GATEWAY_IONET_BASE_URL: `${up.url}/caas`,
          GATEWAY_IONET_TIMEOUT_MS: '2000',
          GATEWAY_CODER_TOKEN_URL: `${up.url}/token`,
          GATEWAY_RELAY_TOKEN_SECRET: RELAY_ENV.GATEWAY_RELAY_TOKEN_SECRET,
          GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: '2000',
        },
      });
      const root = await s.staff('fuzz-root', 'root');
      const admin = await s.staff('fuzz-admin', 'admin');
      const { secret: totpSecret } = await s.services.staff.enrollTotp('fuzz-root');
      const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'fuzz', models: 'gpt-test', key: UPSTREAM_KEY, base_url: up.url } });
      assert.equal(created.json?.success, true, created.text);
      const id = (await s.ctx.db.selectFrom('channels').select('id').executeTakeFirstOrThrow()).id;
      target = {
        service: 'gateway',
        baseUrl: s.url,
        ops: gatewayOperations().filter((o) => o.state === 'implemented' && o.spec.auth !== 'workload'),
        identities: [
          { name: 'anonymous', headers: () => ({}) },
          { name: 'root', headers: () => ({ authorization: `Bearer ${root.token}` }) },
          { name: 'admin', headers: () => ({ authorization: `Bearer ${admin.token}` }) },
        ],
        bodyLimit: s.ctx.config.bodyLimitBytes,
        errorShape: 'envelope',
        // SPEC's answers when an upstream (a channel's API, io.net, the coder token endpoint) fails.
        allowed5xx: { ...Object.fromEntries(Object.keys(upstreamErrors).map((c) => [c, 'upstream failure'])), DEPLOYMENT_PROVIDER_KEY_REJECTED: 'io.net refused the key' },
        secrets: () => [UPSTREAM_KEY, IONET_KEY, totpSecret, root.token!, admin.token!],
        logText: () => s.log.text(),
        known: { id, channel_id: id },
      };
      // The relay's internal API: errors in each caller format's shape; its channel's upstream is the fake's chat route.
      await s.services.ratios.setCurrent({ model_ratio: { 'gpt-test': 1 } });
      let workload = await relayToken();
      const forged = await relayToken({ key: { alg: 'HS256', secret: 'another-secret-0123456789abcdef-0123456789' } });
      relayTarget = {
        ...target,
        service: 'gateway relay',
        ops: gatewayOperations().filter((o) => o.spec.auth === 'workload'),
        identities: [
          ...target.identities,
          { name: 'workload', headers: () => ({ authorization: `Bearer ${workload}` }) },
          { name: 'forged workload', headers: () => ({ authorization: `Bearer ${forged}` }) },
        ],
        bodyLimit: s.ctx.config.gateway.relay.maxRequestBytes,
        // GR05 and GR09 answer in Anthropic's error shape, GR06 in Google's (the code in a header); the rest in OpenAI's.
        errorShape: (op) => (op === 'GR05' || op === 'GR09' ? 'anthropic' : op === 'GR06' ? 'gemini' : 'openai'),
        allowed5xx: {
          relay_upstream_error: 'the channel\'s upstream failed', relay_upstream_timeout: 'upstream timeout', relay_upstream_unreachable: 'upstream unreachable',
          relay_upstream_bad_response: 'upstream answer not understood', relay_no_channel: 'no channel serves the model', relay_model_unpriced: 'the model has no price',
        },
        passedStatus: { relay_upstream_error: "the upstream's status is kept (after status_code_mapping)" },
        secrets: () => [...target.secrets(), workload, forged],
        known: { model: 'gpt-test', target: 'gpt-test:generateContent' },
        // Workload tokens live at most 60 s: a fresh one for each operation.
        afterOperation: async () => void (workload = await relayToken()),
      };
    });
    after(async () => {
      await s?.close();
      await up?.close();
    });

    test('no 5xx beyond upstream failures, only catalog error envelopes, no stack traces, no secrets in bodies or logs', async () => {
      await assertFuzzClean(target);
    });

    test('the relay\'s internal API: no 5xx beyond upstream and routing failures, errors in the caller format\'s shape, no secrets', async () => {
      // The first target deleted and disabled channels: the relay gets one of its own.
      const root = s.client(relayTarget.identities[1]!.headers().authorization!.slice(7));
      const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'relay-fuzz', models: 'gpt-test', key: UPSTREAM_KEY, base_url: up.url } });
      assert.equal(created.json?.success, true, created.text);
      // The first target also replaced the ratio configuration (GS17): the relay's model gets its price back.
      await s.services.ratios.setCurrent({ model_ratio: { 'gpt-test': 1 } });
      await assertFuzzClean(relayTarget);
    });
  });
}
