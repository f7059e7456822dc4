import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from '../../helpers/cli.js';
import { registerAccountCommands } from '../../../src/account/cli.js';
import { openCustomerPort } from '../../../src/cli-program.js';
import { CUSTOMER_API_SECRET, eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

const STARTING = 1234;

// The account's CLI reaches the edge as the server does (src/cli-program.ts openCustomerPort): the edge
// opened in the CLI's process when SERVICES names it, else over ACCOUNT_EDGE_URL.
eachPlacement('account CLI and the edge', (v, apart) => {
  let c: CustomerStack;
  let env: Record<string, string>;

  before(async () => {
    c = await startCustomerStack(v, { apart, accountEnv: { QUOTA_FOR_NEW_USER: String(STARTING) } });
    env = {
      ...c.account.env,
      ...(apart
        ? { SERVICES: 'account', ACCOUNT_EDGE_URL: c.st.edge.url, ACCOUNT_EDGE_TOKEN_KEY: CUSTOMER_API_SECRET }
        : { SERVICES: 'account,edge', EDGE_DATABASE_URL: c.st.edge.databaseUrl, DATA_DIR: c.st.edge.dataDir }),
    };
  });
  after(() => c.close());

  const cli = (extra: Record<string, string>, ...args: string[]) => runCli((p, boot) => registerAccountCommands(p, boot, openCustomerPort), { ...env, ...extra }, args);

  test('user create grants the starting balance (QUOTA_FOR_NEW_USER); with none configured the edge is not touched', async () => {
    const made = await cli({}, 'user', 'create', '--username', 'cliuser', '--password', 'cli user password 1');
    assert.equal(made.error, null);
    const id = Number(/id (\d+)/.exec(made.lines.join('\n'))![1]);
    assert.deepEqual(await c.st.edge.services.customers.balance(id), { quota: STARTING, used_quota: 0, request_count: 0 });
    const b = c.account.browser();
    assert.equal((await b.login('cliuser', 'cli user password 1')).json.success, true);
    assert.equal((await b.get('/api/user/self')).json.data.quota, STARTING);

    const none = await cli({ QUOTA_FOR_NEW_USER: '0' }, 'user', 'create', '--username', 'nobalance', '--password', 'no balance password 1');
    assert.equal(none.error, null);
    const other = Number(/id (\d+)/.exec(none.lines.join('\n'))![1]);
    assert.deepEqual(await c.st.edge.services.customers.balance(other), { quota: 0, used_quota: 0, request_count: 0 });
    const owners = await c.st.edge.ctx.db.selectFrom('edge_owners').select('name').where('name', '=', `account-${other}`).execute();
    assert.deepEqual(owners, [], 'the edge has not met the user');
  });
});
