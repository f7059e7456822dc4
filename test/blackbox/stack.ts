import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Browser } from '../helpers/http.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import { openaiFake, RATIOS, UPSTREAM_KEY } from '../helpers/stack.js';
import { SESSION_SECRET, startProcesses, type Mode, type Processes } from './product.js';

/**
 * The product set up as an operator does it, through public interfaces only: a root account user and a root
 * staff with the CLI; a channel to a fake OpenAI upstream, its prices and the edge's public models over the
 * gateway's API; customers who register themselves.
 *
 * Prices (test/helpers/stack.ts RATIOS): gpt-4o model_ratio 2, completion_ratio 3; the fake answers every
 * chat call with 100 prompt and 20 completion tokens, so a call costs (100 + 20 × 3) × 2 = 320 units.
 */
export const CALL_COST = 320;
export const CALL_TOKENS = 120;
/** Public models on the edge: enabled, enabled, disabled. slow-model is served by the channel but not public. */
export const MODELS = { chat: 'gpt-4o', embedding: 'text-embedding-3-small', disabled: 'broken-model', notPublic: 'slow-model' } as const;
/** What one gpt-4o call holds at least (the model's reserve), above its cost. */
export const CHAT_RESERVE = 1000;

export interface Customer {
  id: number;
  username: string;
  password: string;
  /** Signed in: the session's access token and cookies. */
  web: Browser;
}

export interface Product extends Processes {
  up: FakeUpstream;
  /** The signed-in root account user. */
  admin: Browser;
  adminId: number;
  staffToken: string;
  /** Every secret the test saw (keys, codes, passwords, session tokens): none may appear in the servers' output. */
  secrets: Set<string>;
  register(prefix: string): Promise<Customer>;
  /** Sets a customer's balance through the admin's quota edit (PUT /api/user/). */
  fund(c: Customer, quota: number, reason?: string): Promise<void>;
  /** POST /v1/chat/completions on the edge with this key. */
  chat(key: string, body?: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; json: any; text: string }>;
  /** Upstream chat calls so far. */
  upstreamCalls(): number;
  close(): Promise<void>;
}

let serial = 0;
const unique = () => `${process.pid.toString(36)}${(serial++).toString(36)}${crypto.randomBytes(2).toString('hex')}`;

async function gatewayCall(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok && JSON.parse(text).success !== false, `${method} ${path} on the gateway: ${res.status} ${text}`);
  return JSON.parse(text);
}

export async function startProduct(mode: Mode): Promise<Product> {
  const up = await openaiFake();
  const adminPassword = `root-${crypto.randomBytes(9).toString('base64url')}`;
  let p: Processes;
  let staffToken: string;
  try {
    // The operator's CLI commands, run while the server starts: a root account user, a root staff and its token.
    const started = await startProcesses(mode, async (cli) => {
      const [, token] = await Promise.all([
        cli('account', ['user', 'create', '--username', 'root', '--password', adminPassword, '--role', 'root']),
        cli('gateway', ['staff', 'create', '--name', 'ops', '--role', 'root']).then(async () => (await cli('gateway', ['token', 'create', '--staff', 'ops'])).trim().split('\n').pop()!.trim()),
      ]);
      return token;
    });
    p = started.processes;
    staffToken = started.result;
  } catch (e) {
    await up.close();
    throw e;
  }
  try {
    assert.match(staffToken, /^\S{20,}$/, 'token create prints the bearer token last');

    const gw = (method: string, path: string, body?: unknown) => gatewayCall(p.gatewayUrl, staffToken, method, path, body);
    await gw('POST', '/api/channel/', { mode: 'single', channel: { type: 1, name: 'fake', base_url: up.url, key: UPSTREAM_KEY, models: Object.keys(RATIOS.model_ratio).join(','), group: 'default' } });
    await gw('PUT', '/api/ratio_config', RATIOS);
    await gw('PUT', '/api/edge/models', { public_model_id: MODELS.chat, reserve_amount: CHAT_RESERVE });
    await gw('PUT', '/api/edge/models', { public_model_id: MODELS.embedding, reserve_amount: 100 });
    await gw('PUT', '/api/edge/models', { public_model_id: MODELS.disabled, reserve_amount: 100, enabled: false });

    const admin = new Browser(p.accountUrl);
    const login = await admin.login('root', adminPassword);
    assert.equal(login.json?.success, true, `root login: ${login.text}`);
    const adminId = (await admin.get('/api/user/self')).json.data.id;
    const secrets = new Set<string>([adminPassword, staffToken, UPSTREAM_KEY, SESSION_SECRET, admin.accessToken!]);

    const product: Product = {
      ...p,
      up,
      admin,
      adminId,
      staffToken,
      secrets,
      async register(prefix) {
        const username = `${prefix.slice(0, 8)}${unique()}`.slice(0, 20);
        const password = `pw-${crypto.randomBytes(12).toString('base64url')}`;
        const web = new Browser(p.accountUrl);
        const r = await web.post('/api/user/register', { username, password });
        assert.equal(r.json?.success, true, `register ${username}: ${r.text}`);
        const l = await web.login(username, password);
        assert.equal(l.json?.success, true, `login ${username}: ${l.text}`);
        secrets.add(password);
        secrets.add(web.accessToken!);
        const self = await web.get('/api/user/self');
        assert.equal(self.json?.success, true, self.text);
        return { id: self.json.data.id, username, password, web };
      },
      async fund(c, quota, reason = 'black-box funding') {
        const r = await admin.request('PUT', '/api/user/', { body: { id: c.id, quota, reason } });
        assert.equal(r.json?.success, true, `PUT /api/user/ quota ${quota}: ${r.status} ${r.text}`);
      },
      async chat(key, body = {}, headers = {}) {
        const res = await fetch(`${p.edgeUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ model: MODELS.chat, messages: [{ role: 'user', content: 'Say hello' }], ...body }),
        });
        const text = await res.text();
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {}
        return { status: res.status, json, text };
      },
      upstreamCalls: () => up.to('/v1/chat/completions').length,
      async close() {
        await p.stop();
        await up.close();
      },
    };
    return product;
  } catch (e) {
    await p.stop();
    await up.close();
    throw e;
  }
}

/** Polls `read` until `done` holds of its answer (a settlement lands just after the call's answer). */
export async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T;
  for (;;) {
    last = await read();
    if (done(last)) return last;
    if (Date.now() > end) assert.fail(`${what}: still ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** new-api's default token settings, as its dashboard sends them. */
export function tokenBody(name: string, over: Record<string, unknown> = {}) {
  return { name, expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '', ...over };
}

/** A customer's balance as /api/user/self shows it. */
export async function balanceOf(c: Customer) {
  const r = await c.web.get('/api/user/self');
  assert.equal(r.json?.success, true, r.text);
  const { quota, used_quota, request_count } = r.json.data;
  return { quota, used_quota, request_count };
}

/** Creates a token; answers it and its full key (from the create answer: its one reveal stays unused). */
export async function createToken(p: Product, c: Customer, name: string, over: Record<string, unknown> = {}) {
  const r = await c.web.post('/api/token/', tokenBody(name, over));
  assert.equal(r.json?.success, true, `POST /api/token/: ${r.text}`);
  const key: string = r.json.data?.key;
  const id: number = r.json.data?.id;
  assert.ok(Number.isSafeInteger(id) && id > 0, `the create answer names the token: ${r.text}`);
  assert.ok(typeof key === 'string' && key.length >= 20 && !key.includes('*'), `the create answer carries the full key: ${r.text}`);
  p.secrets.add(key);
  const secretPart = key.split('.').pop()!;
  if (secretPart.length >= 16) p.secrets.add(secretPart);
  return { id, key, created: r.json.data };
}

export async function tokenOf(c: Customer, id: number) {
  const r = await c.web.get(`/api/token/${id}`);
  assert.equal(r.json?.success, true, r.text);
  return r.json.data;
}
