import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { edgeWireShapeOf } from '../../src/contract/wire-errors.js';
import { edgeOperations } from '../../src/edge/app.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { signWorkloadToken } from '../../src/kit/crypto/workload-token.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { assertFuzzClean, fuzzVariants, type FuzzTarget } from './fuzz-run.js';

for (const variant of fuzzVariants()) {
  describe(`fuzz of every edge operation [${variant.name}]`, () => {
    let s: EdgeServer;
    let target: FuzzTarget;
    const SECRET = 'fuzz-customer-api-secret-0123456789abcdef';
    const customerToken = (secret = SECRET) => signWorkloadToken({ alg: 'HS256', secret }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });

    before(async () => {
      // The per-key rate limit is raised so the fuzz reaches validation and handlers, not 429.
      s = await startEdge(variant, { env: { EDGE_RATE_LIMIT_PER_MINUTE: '1000000', EDGE_CUSTOMER_TOKEN_SECRET: SECRET } });
      assert.equal((await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1')).error, null);
      assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100000000')).error, null);
      const key = await s.issueKey('acme');
      // The internal customer API (ER01) takes the account service's workload token: a valid one and a forged one.
      let workload = await customerToken();
      const forged = await customerToken('another-secret-0123456789abcdef-0123456789');
      let n = 0;
      const ops = edgeOperations().filter((o) => o.state === 'implemented' || o.state === 'placeholder');
      const methods = new Map(ops.map((o) => [o.spec.id, o.spec.method]));
      target = {
        service: 'edge',
        baseUrl: s.url,
        // E01–E06, ER01 and the placeholder routes (EP01–EP12), which answer 501 after the credential check.
        ops,
        identities: [
          { name: 'anonymous', headers: () => ({}) },
          { name: 'unknown key', headers: () => ({ authorization: 'Bearer svc_sk_AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' }) },
          { name: 'developer', headers: () => ({ authorization: `Bearer ${key}` }) },
          { name: 'workload', headers: () => ({ authorization: `Bearer ${workload}` }) },
          { name: 'forged workload', headers: () => ({ authorization: `Bearer ${forged}` }) },
        ],
        bodyLimit: s.ctx.config.bodyLimitBytes,
        // Each path answers in its caller format's error shape (Anthropic's, Google's, else OpenAI's).
        errorShape: (op, path) => edgeWireShapeOf(methods.get(op)!, path),
        allowed5xx: { api_not_implemented: 'SPEC: placeholder routes answer 501', admission_disabled: 'SPEC: 503 when PUBLIC_ADMISSION_MODE=disabled', customer_unavailable: 'ER01: the port cannot serve the method here (prices need the gateway, which this edge has not)', service_unavailable: 'no gateway relay is configured in this set-up: a call that passes admission cannot be relayed' },
        secrets: () => [key, parseCredential(key)!.secret, SECRET, workload, forged],
        logText: () => s.log.text(),
        known: { publicModelId: 'gpt-test', method: 'balance' },
        headersFor: (c): Record<string, string> => (c.op === 'E01' ? { 'idempotency-key': `fuzz-${++n}` } : {}),
        // Workload tokens live at most 60 s: a fresh one for each operation.
        afterOperation: async () => void (workload = await customerToken()),
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
