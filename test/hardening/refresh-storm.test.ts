import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postgresWithRedis } from '../helpers/services.js';
import { startTwoAccounts, type AccountServer } from '../helpers/account.js';
import { Browser } from '../helpers/http.js';

const PASSWORD = 'refresh-storm-password';
const CLIENTS = 20;
const ROUNDS = 30;
const pgVariant = postgresWithRedis('refresh storm on two instances');

/**
 * A refresh storm on two account instances sharing PostgreSQL and Redis: every client (one session, one
 * cookie jar) refreshes in a loop, alternating instances; every third round two tabs of the client refresh
 * the same token at once on both instances, and every fifth round a lagging tab presents a token two
 * rotations old. All of it inside the grace window, so no session may be lost or revoked.
 */
if (pgVariant) {
  let a: AccountServer;
  let b: AccountServer;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await startTwoAccounts(pgVariant, { REDIS_KEY_PREFIX: `storm${process.pid}${Date.now()}:`, REFRESH_REUSE_GRACE_SECONDS: '30' }));
  });
  after(() => close?.());

  test('a refresh storm over two instances loses no session and revokes none', async (t) => {
    const instances = [a, b];
    const clients: { jar: Browser; sid: string; history: string[] }[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      await a.createUser(`storm${i}`, PASSWORD);
      const jar = instances[i % 2].browser();
      assert.equal((await jar.login(`storm${i}`, PASSWORD)).json.success, true);
      const token = jar.cookies.get('new_api_refresh')!;
      clients.push({ jar, sid: token.split('.')[0], history: [token] });
    }
    const statuses = new Map<number, number>();
    let requests = 0;
    // One tab of a client: presents `token` to an instance and, like a browser, stores the cookie it gets back.
    async function tab(client: (typeof clients)[number], server: AccountServer, token: string) {
      const other = new Browser(server.url);
      other.cookies.set('new_api_refresh', token);
      const r = await other.post('/api/user/auth/refresh');
      requests++;
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) client.jar.cookies.set('new_api_refresh', other.cookies.get('new_api_refresh')!);
      return r;
    }
    const started = Date.now();
    await Promise.all(
      clients.map(async (client, i) => {
        for (let round = 0; round < ROUNDS; round++) {
          const current = client.jar.cookies.get('new_api_refresh')!;
          const server = instances[(i + round) % 2];
          const sameToken = [tab(client, server, current)];
          if (round % 3 === 0) sameToken.push(tab(client, instances[(i + round + 1) % 2], current));
          const lagging = round % 5 === 4 ? [tab(client, server, client.history.at(-3)!)] : [];
          const replies = await Promise.all([...sameToken, ...lagging]);
          for (const r of replies) assert.equal(r.status, 200, `client ${i} round ${round}: ${r.status} ${r.json?.code}`);
          const cookies = replies.slice(0, sameToken.length).map((r) => r.setCookies.find((c) => c.startsWith('new_api_refresh='))?.split(';')[0]);
          assert.equal(new Set(cookies).size, 1, 'tabs presenting the same token get the same successor');
          client.history.push(client.jar.cookies.get('new_api_refresh')!);
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    t.diagnostic(`${requests} refresh requests from ${CLIENTS} clients in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

    // Every session is still alive: refreshable on both instances, and active in the database.
    for (const [i, client] of clients.entries()) {
      const r = await tab(client, instances[i % 2], client.jar.cookies.get('new_api_refresh')!);
      assert.equal(r.status, 200, `client ${i} lost its session`);
      const onOther = new Browser(instances[(i + 1) % 2].url);
      onOther.accessToken = r.json.data.access_token;
      assert.equal((await onOther.get('/api/user/sessions')).status, 200);
    }
    const rows = await a.ctx.database.db.selectFrom('user_sessions').select(['sid', 'status', 'revoked_reason']).execute();
    assert.equal(rows.length, CLIENTS);
    assert.deepEqual(rows.filter((r) => r.status !== 'active'), []);
    assert.deepEqual(new Set(rows.map((r) => r.sid)), new Set(clients.map((c) => c.sid)));
  });
}
