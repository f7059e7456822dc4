import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { edgeOperations } from '../../src/edge/app.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { assertFuzzClean, fuzzVariants, type FuzzTarget } from './fuzz-run.js';

for (const variant of fuzzVariants()) {
  describe(`fuzz of every edge operation [${variant.name}]`, () => {
    let s: EdgeServer;
    let target: FuzzTarget;

    before(async () => {
      // The per-key rate limit is raised so the fuzz reaches validation and handlers, not 429.
      s = await startEdge(variant, { env: { EDGE_RATE_LIMIT_PER_MINUTE: '1000000' } });
      assert.equal((await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1')).error, null);
      assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100000000')).error, null);
      const key = await s.issueKey('acme');
      let n = 0;
      target = {
        service: 'edge',
        baseUrl: s.url,
        // E01 and the placeholder routes (EP01–EP12), which answer 501 after the credential check.
        ops: edgeOperations().filter((o) => o.state === 'implemented' || o.state === 'placeholder'),
        identities: [
          { name: 'anonymous', headers: () => ({}) },
          { name: 'unknown key', headers: () => ({ authorization: 'Bearer svc_sk_AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }) },
          { name: 'developer', headers: () => ({ authorization: `Bearer ${key}` }) },
        ],
        bodyLimit: s.ctx.config.bodyLimitBytes,
        errorShape: 'openai',
        allowed5xx: { api_not_implemented: 'SPEC: placeholder routes answer 501', admission_disabled: 'SPEC: 503 when PUBLIC_ADMISSION_MODE=disabled' },
        secrets: () => [key, parseCredential(key)!.secret],
        logText: () => s.log.text(),
        known: { publicModelId: 'gpt-test' },
        headersFor: (c): Record<string, string> => (c.op === 'E01' ? { 'idempotency-key': `fuzz-${++n}` } : {}),
      };
    });
    after(async () => {
      await s?.close();
    });

    test('no 5xx beyond the spec\'s 501/503, only catalog error bodies, no stack traces, no secrets in bodies or logs', async () => {
      await assertFuzzClean(target);
    });
  });
}
