import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { startAccount, type AccountServer } from '../../helpers/account.js';
import { startStack, type Stack } from '../../helpers/stack.js';
import { eachDatabase, type Variant } from '../../helpers/services.js';
import type { Browser } from '../../helpers/http.js';
import type { CustomerHolder } from '../../../src/contract/customer.js';
import { ROLE } from '../../../src/account/db.js';
import { httpCustomerPort } from '../../../src/account/customers/http-port.js';

/** The HS256 key of the edge's internal customer API when the account reaches it over HTTP. */
export const CUSTOMER_API_SECRET = 'customer-api-stack-secret-0123456789abcdef';

/**
 * Runs `body` once per database variant with the account and the edge co-hosted (the port in process), and
 * on SQLite with them apart (the port over the edge's internal API, as SERVICES=account with ACCOUNT_EDGE_URL).
 * The transport itself is tested on every database in http-port.test.ts; behind it runs the same port, so
 * the apart runs on PostgreSQL and MySQL would repeat the co-hosted ones at twice the time.
 */
export function eachPlacement(title: string, body: (v: Variant, apart: boolean) => void) {
  eachDatabase(title, (v) => body(v, false));
  describe(`${title}, the edge apart [sqlite]`, () => body({ name: 'sqlite' }, true));
}

export interface CustomerStack {
  st: Stack;
  account: AccountServer;
  holder: CustomerHolder;
  /** A signed-in browser of a new account user, and its id. */
  customer(name: string): Promise<{ b: Browser; id: number }>;
  /** A signed-in root admin. */
  root: Browser;
  rootId: number;
  /** Everything both services logged and answered (for secret checks). */
  everything(): string;
  close(): Promise<void>;
}

/**
 * The account service co-hosted with the edge as src/services.ts wires them (the account built first, the
 * holder filled with the edge's customer port), the edge calling a gateway with a fake OpenAI upstream
 * (test/helpers/stack.ts: gpt-4o costs 320 units per chat call) with `gpt-4o` set up as an edge model.
 * `apart`: the account reaches the edge's port over its internal API with a workload token instead.
 */
export async function startCustomerStack(v: Variant, opts: { accountEnv?: Record<string, string>; edgeEnv?: Record<string, string>; apart?: boolean; accountPort?: number } = {}): Promise<CustomerStack> {
  const st = await startStack(v, { edgeEnv: { ...(opts.apart ? { EDGE_CUSTOMER_TOKEN_SECRET: CUSTOMER_API_SECRET } : {}), ...opts.edgeEnv } });
  const holder: CustomerHolder = { port: null };
  let account: AccountServer;
  try {
    // The console's snippets and playground reach this edge (EDGE_PUBLIC_URL).
    account = await startAccount(v, { customers: holder, env: { EDGE_PUBLIC_URL: st.edge.url, ...opts.accountEnv }, port: opts.accountPort });
  } catch (e) {
    await st.close();
    throw e;
  }
  holder.port = opts.apart ? httpCustomerPort({ url: st.edge.url, tokenKey: CUSTOMER_API_SECRET, timeoutMs: 10_000, log: account.ctx.log }) : st.edge.services.customers;
  assert.equal((await st.edge.cli('edge', 'model', 'set', 'gpt-4o', '--reserve', '500')).error, null);
  const rootId = await account.createUser('boss', 'boss password 1', { role: ROLE.root });
  const root = account.browser();
  await root.login('boss', 'boss password 1');
  return {
    st,
    account,
    holder,
    root,
    rootId,
    async customer(name) {
      const password = `${name} password 1`;
      const id = await account.createUser(name, password);
      const b = account.browser();
      const r = await b.login(name, password);
      assert.equal(r.json?.success, true, r.text);
      return { b, id };
    },
    everything: () => `${account.log.text()}\n${st.edge.everything()}\n${st.gateway.everything()}`,
    async close() {
      await account.close();
      await st.close();
    },
  };
}

/** Waits until the edge has settled every synchronous call (a call is settled after its last byte). */
export async function settled(st: Stack) {
  for (let i = 0; i < 200; i++) {
    const open = await st.edge.ctx.db.selectFrom('edge_runs').select('run_id').where('status', 'in', ['reserved', 'running']).where('kind', '=', 'sync').execute();
    if (!open.length) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('a sync run was never settled');
}

/** One chat call on the edge with an API key, as a customer's SDK makes it. */
export async function chat(st: Stack, key: string, model = 'gpt-4o') {
  const r = await st.edge.request('POST', '/v1/chat/completions', { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
  await settled(st);
  return r;
}
