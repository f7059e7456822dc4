import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser } from '../../helpers/http.js';
import { runCli } from '../../helpers/cli.js';
import { CHAT_COST } from '../../helpers/stack.js';
import { until } from '../../helpers/runs.js';
import { registerAccountCommands } from '../../../src/account/cli.js';
import { httpCustomerPort } from '../../../src/account/customers/http-port.js';
import { openCustomerPort } from '../../../src/cli-program.js';
import { readAudit } from '../../../src/edge/audit/store.js';
import { chat, CUSTOMER_API_SECRET, eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

const TOKEN = { name: 'sdk', expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

// A disabled account user's API keys stop at the edge (AS08 disable and the CLI's `user disable`), whatever
// each token's own status; enabling the user turns back on exactly the tokens the user had left on. A refused
// call is neither relayed nor charged. When the edge cannot stop the keys, the disable fails and changes nothing.
eachPlacement('a disabled user\'s API keys', (v, apart) => {
  let c: CustomerStack;
  let alice: { b: Browser; id: number };
  let on: { id: number; key: string };
  let off: { id: number; key: string };

  before(async () => {
    c = await startCustomerStack(v, { apart });
    alice = await c.customer('alice');
    assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: alice.id, quota: 100_000, reason: 'test credit' } })).json.success, true);
    const made = async (name: string) => {
      const r = await alice.b.post('/api/token/', { ...TOKEN, name });
      assert.equal(r.json.success, true, r.text);
      return { id: r.json.data.id as number, key: r.json.data.key as string };
    };
    on = await made('on');
    off = await made('off');
    // Alice turns one of her tokens off herself.
    assert.equal((await alice.b.request('PUT', '/api/token/?status_only=true', { body: { id: off.id, status: 2 } })).json.data.status, 2);
  });
  after(async () => {
    const all = c.everything();
    for (const key of [on.key, off.key]) assert.ok(!all.includes(key), 'a key reached a log');
    await c.close();
  });

  const quota = async (id: number) => (await c.root.get(`/api/user/${id}`)).json.data.quota as number;
  const models = (key: string) => c.st.edge.request('GET', '/v1/models', { token: key });
  const manage = (id: number, action: string) => c.root.post('/api/user/manage', { id, action });
  function refusedAsDisabledUser(r: { status: number; json: any }) {
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'user_disabled');
  }

  test('AS08 disable: every key of the user is refused (chat and models), nothing relayed or charged; enable restores exactly the tokens the user left on', async () => {
    assert.equal((await chat(c.st, on.key)).status, 200);
    const balance = await quota(alice.id);
    const relayed = c.st.up.seen.length;

    const r = await manage(alice.id, 'disable');
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.status, 2);
    for (const key of [on.key, off.key]) {
      refusedAsDisabledUser(await chat(c.st, key));
      refusedAsDisabledUser(await models(key));
      const streamed = await c.st.edge.request('POST', '/v1/chat/completions', { token: key, body: { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
      refusedAsDisabledUser(streamed);
    }
    assert.equal(c.st.up.seen.length, relayed, 'a refused call reached the upstream');
    assert.equal(await quota(alice.id), balance, 'a refused call was charged');
    // The tokens themselves are as the user left them.
    const tokens = await c.st.edge.services.customers.listTokens(alice.id, { page: 1, size: 10 });
    assert.deepEqual(tokens.items.map((t) => [t.id, t.status]).sort(), [[on.id, 1], [off.id, 2]].sort());
    // A repeat changes nothing and succeeds.
    assert.equal((await manage(alice.id, 'disable')).json.success, true);

    const enabled = await manage(alice.id, 'enable');
    assert.equal(enabled.json.success, true, enabled.text);
    assert.equal(enabled.json.data.status, 1);
    assert.equal((await chat(c.st, on.key)).status, 200);
    assert.equal((await models(on.key)).status, 200);
    const stillOff = await chat(c.st, off.key);
    assert.deepEqual([stillOff.status, stillOff.json.error.code], [401, 'token_disabled'], 'the token the user disabled stays disabled');
    assert.equal(await quota(alice.id), balance - CHAT_COST);
    const b = c.account.browser();
    assert.equal((await b.login('alice', 'alice password 1')).json.success, true);
    assert.equal((await b.get(`/api/token/${off.id}`)).json.data.status, 2);
    // The edge's audit log says who turned the keys off and on.
    const audit = (await readAudit(c.st.edge.ctx.db, 50)).filter((a) => a.operation.startsWith('owner.'));
    assert.deepEqual(audit.map((a) => [a.operation, a.actor, JSON.parse(a.detail).owner]).reverse(), [
      ['owner.suspend', `account:${c.rootId}`, `account-${alice.id}`],
      ['owner.resume', `account:${c.rootId}`, `account-${alice.id}`],
    ]);
  });

  test('a user disabled before their first key: a key the edge gets later (an import) is refused too', async () => {
    const { id } = await c.customer('newbie');
    assert.equal((await manage(id, 'disable')).json.success, true);
    const created = await c.st.edge.services.customers.createToken(id, TOKEN);
    await c.st.edge.services.customers.grant(id, 10_000, `test:${id}`, 'system:test', 'credit');
    refusedAsDisabledUser(await chat(c.st, created.key));
    assert.equal((await manage(id, 'enable')).json.success, true);
    assert.equal((await chat(c.st, created.key)).status, 200);
  });

  test('CLI user disable and enable switch the keys too, on the edge of SERVICES or ACCOUNT_EDGE_URL', async () => {
    const env: Record<string, string> = {
      ...c.account.env,
      ...(apart
        ? { SERVICES: 'account', ACCOUNT_EDGE_URL: c.st.edge.url, ACCOUNT_EDGE_TOKEN_KEY: CUSTOMER_API_SECRET }
        : { SERVICES: 'account,edge', EDGE_DATABASE_URL: c.st.edge.databaseUrl, DATA_DIR: c.st.edge.dataDir }),
    };
    const cli = (...args: string[]) => runCli((p, boot) => registerAccountCommands(p, boot, openCustomerPort), env, args);
    const disabled = await cli('user', 'disable', '--username', 'alice');
    assert.equal(disabled.error, null);
    // Co-hosted, the CLI writes through a database connection of its own, as another process would: the edge
    // serving the calls sees the change within 1 s (src/edge/keys/store.ts), so it is polled for.
    await until('the keys refused', async () => (await chat(c.st, on.key)).status === 403);
    refusedAsDisabledUser(await chat(c.st, on.key));
    assert.equal((await cli('user', 'enable', '--username', 'alice')).error, null);
    await until('the keys accepted again', async () => (await chat(c.st, on.key)).status === 200);
    assert.equal((await chat(c.st, off.key)).status, 401);
  });

  test('AS08 delete stops the keys before it deletes them', async () => {
    const { b, id } = await c.customer('doomed');
    await c.root.request('PUT', '/api/user/', { body: { id, quota: 10_000, reason: 'test credit' } });
    const key = (await b.post('/api/token/', TOKEN)).json.data.key as string;
    assert.equal((await manage(id, 'delete')).json.success, true);
    assert.equal((await chat(c.st, key)).status, 401);
    assert.ok((await readAudit(c.st.edge.ctx.db, 50)).some((a) => a.operation === 'owner.suspend' && JSON.parse(a.detail).owner === `account-${id}`));
  });

  if (apart) {
    test('the edge unreachable: disable fails with 503 EDGE_UNAVAILABLE and leaves the user and the keys as they were; enable fails with the keys still off', async () => {
      const reachable = c.holder.port;
      c.holder.port = httpCustomerPort({ url: `http://127.0.0.1:${await closedPort()}`, tokenKey: CUSTOMER_API_SECRET, timeoutMs: 2000, log: c.account.ctx.log });
      try {
        const r = await manage(alice.id, 'disable');
        assert.deepEqual([r.status, r.json.success, r.json.code], [503, false, 'EDGE_UNAVAILABLE'], r.text);
        assert.equal((await c.root.get(`/api/user/${alice.id}`)).json.data.status, 1, 'the user is left enabled');
        assert.equal((await chat(c.st, on.key)).status, 200, 'and the keys as they were');
      } finally {
        c.holder.port = reachable;
      }
      assert.equal((await manage(alice.id, 'disable')).json.success, true);
      c.holder.port = httpCustomerPort({ url: `http://127.0.0.1:${await closedPort()}`, tokenKey: CUSTOMER_API_SECRET, timeoutMs: 2000, log: c.account.ctx.log });
      try {
        const r = await manage(alice.id, 'enable');
        assert.deepEqual([r.status, r.json.code], [503, 'EDGE_UNAVAILABLE'], r.text);
        refusedAsDisabledUser(await chat(c.st, on.key));
      } finally {
        c.holder.port = reachable;
      }
      assert.equal((await manage(alice.id, 'enable')).json.success, true, 'a repeat finishes it');
      assert.equal((await chat(c.st, on.key)).status, 200);
    });
  }
});
