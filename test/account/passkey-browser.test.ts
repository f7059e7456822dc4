import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startAccount, type AccountServer } from '../helpers/account.js';

// End-to-end: headless Chromium with the DevTools virtual authenticator registers a passkey and logs in
// with it against the real server, through a small page served by this test.
const CHROMIUM = '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
const required = process.env.CI === 'true' || process.env.TEST_REQUIRE_SERVICES === '1';
if (!available && required) throw new Error(`${CHROMIUM} is missing; CI installs it (.ci/run)`);
const skip = available ? false : `${CHROMIUM} not installed: browser passkey test skipped (CI installs it)`;

const PAGE = `<!doctype html><meta charset="utf-8"><title>passkey e2e</title><script>
const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const unb64u = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
let token = '';
async function api(path, body, headers = {}) {
  const r = await fetch(path, { method: body === undefined ? 'GET' : 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return r.json();
}
async function register(username, password) {
  token = (await api('/api/user/login', { username, password })).data.access_token;
  const proof = (await api('/api/verify', { method: 'password', scope: 'passkey.register', password })).data.proof_token;
  const begin = (await api('/api/user/passkey/register/begin', {}, { 'x-security-proof': proof })).data;
  const o = begin.options;
  const cred = await navigator.credentials.create({ publicKey: { ...o, challenge: unb64u(o.challenge), user: { ...o.user, id: unb64u(o.user.id) }, excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: unb64u(c.id) })) } });
  const credential = { id: cred.id, rawId: b64u(cred.rawId), type: cred.type, clientExtensionResults: {}, response: { clientDataJSON: b64u(cred.response.clientDataJSON), attestationObject: b64u(cred.response.attestationObject), transports: cred.response.getTransports() } };
  return api('/api/user/passkey/register/finish', { flow_token: begin.flow_token, credential });
}
async function login() {
  token = '';
  const begin = (await api('/api/user/passkey/login/begin', {})).data;
  const o = begin.options;
  const cred = await navigator.credentials.get({ publicKey: { ...o, challenge: unb64u(o.challenge), allowCredentials: [] } });
  const credential = { id: cred.id, rawId: b64u(cred.rawId), type: cred.type, clientExtensionResults: {}, response: { clientDataJSON: b64u(cred.response.clientDataJSON), authenticatorData: b64u(cred.response.authenticatorData), signature: b64u(cred.response.signature), userHandle: cred.response.userHandle ? b64u(cred.response.userHandle) : null } };
  return api('/api/user/passkey/login/finish', { flow_token: begin.flow_token, credential });
}
</script>`;

let s: AccountServer;
let page: http.Server;
let pageOrigin = '';

before(async () => {
  if (skip) return;
  let target = '';
  // The page and the API share one origin (http://localhost:<port>): the page server forwards /api/*.
  page = http.createServer(async (req, res) => {
    if (!req.url?.startsWith('/api/')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'authorization', 'x-security-proof', 'cookie', 'origin']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    const r = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageOrigin = `http://localhost:${(page.address() as { port: number }).port}`;
  s = await startAccount({ name: 'sqlite' }, { env: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: pageOrigin } });
  target = s.url;
  await s.createUser('browser', 'browser password!');
});

after(async () => {
  if (skip) return;
  await s.close();
  await new Promise((r) => page.close(r));
});

test('headless Chromium registers a passkey and logs in with it', { skip }, async () => {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const p = await browser.newPage();
    const cdp = await p.context().newCDPSession(p);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await p.goto(pageOrigin + '/');
    const reg = await p.evaluate(() => (window as any).register('browser', 'browser password!'));
    assert.equal(reg.success, true, JSON.stringify(reg));
    const login = await p.evaluate(() => (window as any).login());
    assert.equal(login.success, true, JSON.stringify(login));
    assert.equal(login.data.session.login_method, 'passkey');
    assert.equal(login.data.user.username, 'browser');
  } finally {
    await browser.close();
  }
});
