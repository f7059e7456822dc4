import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { walletOf } from '../helpers/runs.js';

/** Issue 29, defect 1 at the edge: a body nested 20 000 deep (about 40 KB) is refused before anything is held or relayed. */
eachDatabase('edge input limits: a body nested too deep is a 400 of the caller, never a relayed call', (v) => {
  let st: Stack;
  before(async () => {
    st = await startStack(v);
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'gpt-4o', '--reserve', '500')).error, null);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'deep', '--amount', '10000')).error, null);
  });
  after(() => st.close());

  test('chat, embeddings and admission bodies nested 20 000 deep: 400 json_too_deep; nothing reserved, no upstream call, the channel stays enabled', async () => {
    const key = await st.edge.issueKey('deep');
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const bodies: [string, string][] = [
      ['/v1/chat/completions', `{"model":"gpt-4o","messages":[{"role":"user","content":"hi","x":${deep(20_000)}}]}`],
      ['/v1/chat/completions', `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}]}`],
      ['/v1/embeddings', `{"model":"text-embedding-3-small","input":${deep(20_000)}}`],
      ['/v1/responses', `{"model":"gpt-4o","input":${deep(20_000)}}`],
    ];
    for (const [path, raw] of bodies) {
      for (let i = 0; i < 3; i++) {
        const r = await st.edge.request('POST', path, { token: key, raw, headers: { 'content-type': 'application/json', 'idempotency-key': `deep-${i}-${path.length}` } });
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json.error.code, 'json_too_deep');
        assert.equal(r.json.error.message, 'The request body nests arrays or objects deeper than 128 levels');
      }
    }
    assert.equal(st.up.seen.length, 0, 'the upstream was never contacted');
    const w = await walletOf(st.edge, 'deep');
    assert.deepEqual([w.balance, w.reserved], [10_000, 0]);
    const channel = await st.gateway.ctx.db.selectFrom('channels').select('status').executeTakeFirstOrThrow();
    assert.equal(Number(channel.status), 1);
    const ok = await st.edge.request('POST', '/v1/chat/completions', { token: key, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(ok.status, 200, ok.text);
  });
});
