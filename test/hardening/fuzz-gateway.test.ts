import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gatewayOperations } from '../../src/gateway/app.js';
import { upstreamErrors } from '../../src/contract/errors/upstream.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { assertFuzzClean, fuzzVariants, type FuzzTarget } from './fuzz-run.js';

const UPSTREAM_KEY = 'sk-fuzz-upstream-key-7f3a9c2e1b';
const IONET_KEY = 'io-fuzz-provider-key-4d8e2a';

for (const variant of fuzzVariants()) {
  describe(`fuzz of every gateway operation [${variant.name}]`, () => {
    let s: GatewayServer;
    let up: FakeUpstream;
    let target: FuzzTarget;

    before(async () => {
      // Every outbound call (channels, io.net, coder OAuth) goes to a local fake that answers 404 JSON.
      up = await startFakeUpstream();
      s = await startGateway(variant, {
        env: {
          GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
          GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
          GATEWAY_IONET_BASE_URL: `${up.url}/caas`,
          GATEWAY_IONET_TIMEOUT_MS: '2000',
          GATEWAY_CODER_TOKEN_URL: `${up.url}/token`,
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
        ops: gatewayOperations().filter((o) => o.state === 'implemented'),
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
    });
    after(async () => {
      await s?.close();
      await up?.close();
    });

    test('no 5xx beyond upstream failures, only catalog error envelopes, no stack traces, no secrets in bodies or logs', async () => {
      await assertFuzzClean(target);
    });
  });
}
