/**
 * The account cases of `npm run bench`, against a real account server process (bench/server.ts account).
 * Returns the figures; bench/run.ts prints them against the bare baseline.
 */
import { verify } from '@node-rs/argon2';
import { hashPassword } from '../src/kit/crypto/password.js';
import { alternate, measure, measureFor, LOAD, type CannonCase, type Figures, type Slice, stealMeter } from './lib.js';
import { LOGIN_USERS, READER, REFRESHER } from './users.js';

const REFRESH_COOKIE = 'new_api_refresh';
/** In-flight logins and in-flight raw argon2id verifies (the same concurrency for both). */
export const LOGIN_CONCURRENCY = Number(process.env.BENCH_LOGIN_CONCURRENCY ?? 8);

/** The prefix of every hash the server stores: argon2id, m=19456 KiB, t=2, p=1 (src/kit/crypto/password.ts). */
export const ARGON2_PREFIX = '$argon2id$v=19$m=19456,t=2,p=1$';

const succeeded = (status: number, body: string) => status === 200 && body.includes('"success":true');

function refreshCookieOf(setCookie: unknown): string | undefined {
  const list = Array.isArray(setCookie) ? setCookie : typeof setCookie === 'string' ? [setCookie] : [];
  for (const c of list as string[]) {
    if (c.startsWith(`${REFRESH_COOKIE}=`)) return c.slice(REFRESH_COOKIE.length + 1).split(';')[0];
  }
  return undefined;
}

function headerOf(headers: Record<string, unknown>, name: string): unknown {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** A real password login over HTTP; returns the access token and the refresh cookie value. */
export async function login(url: string, username: string, password: string) {
  const res = await fetch(`${url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ username, password }),
  });
  const json = (await res.json()) as { success: boolean; data?: { access_token?: string } };
  const cookie = refreshCookieOf(res.headers.getSetCookie());
  if (!json.success || !json.data?.access_token || !cookie) throw new Error(`bench login as ${username} failed (${res.status})`);
  return { accessToken: json.data.access_token, refreshCookie: cookie };
}

export async function inBatches<T>(n: number, width: number, fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  while (out.length < n) out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - out.length) }, fn))));
  return out;
}

/** A43: authenticated GET /api/user/sessions with a real access token (the user has one session). */
export function sessionsRead(url: string, pid: number | undefined, accessToken: string, name = 'A43 GET /api/user/sessions (access token)'): CannonCase {
  return { name, url: `${url}/api/user/sessions`, headers: { authorization: `Bearer ${accessToken}` }, check: succeeded, pid };
}

/**
 * POST /api/user/auth/refresh. Every call rotates the token, so requests draw a valid cookie from a
 * pool of 2× connections sessions and put the rotated one back when the response arrives. With
 * pipelining 1 a connection has one request in flight, so no token is ever presented twice.
 */
export async function refresh(url: string, pid: number, cookies: string[]): Promise<Figures> {
  const pool = [...cookies];
  return measure({
    name: 'POST /api/user/auth/refresh (rotating)',
    url: `${url}/api/user/auth/refresh`,
    pid,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, origin: url, cookie: `${REFRESH_COOKIE}=${pool.shift() ?? 'pool-empty'}` },
        }),
        onResponse: (_status, _body, _ctx, headers) => {
          const next = refreshCookieOf(headerOf(headers, 'set-cookie'));
          if (next) pool.push(next);
        },
      },
    ],
    check: (status, body) => succeeded(status, body) && body.includes('"access_token"'),
  });
}

/**
 * A password login case: POST of `body(username)` as JSON to `url` (the server's origin + `path`) with
 * LOGIN_CONCURRENCY connections, cycling through the login users so each ends with a few dozen sessions
 * (the caps count a user's sessions on every login).
 */
export function cyclingLogin(
  name: string,
  origin: string,
  path: string,
  pid: number | undefined,
  body: (username: string) => object,
  check: CannonCase['check'],
): CannonCase {
  let next = 0;
  return {
    name: `${name} (c=${LOGIN_CONCURRENCY})`,
    url: `${origin}${path}`,
    connections: LOGIN_CONCURRENCY,
    pid,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, 'content-type': 'application/json', origin },
          body: JSON.stringify(body(LOGIN_USERS[next++ % LOGIN_USERS.length]!)),
        }),
      },
    ],
    check,
  };
}

/** POST /api/user/login with the right password. */
export function passwordLogin(url: string, pid: number | undefined, password: string): CannonCase {
  return cyclingLogin('POST /api/user/login', url, '/api/user/login', pid, (username) => ({ username, password }), (status, body) =>
    succeeded(status, body) && body.includes('"access_token"'),
  );
}

/**
 * Raw @node-rs/argon2 verify/s at the server's parameters (hash made by the same kit function, so
 * m=19456,t=2,p=1), LOGIN_CONCURRENCY verifies in flight, in this process while the servers are idle.
 */
async function rawArgon2(hash: string, password: string, seconds: number): Promise<Figures> {
  const latencies: number[] = [];
  let failed = 0;
  const steal = stealMeter();
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      if (!(await verify(hash, password))) failed++;
      latencies.push(performance.now() - t);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: LOGIN_CONCURRENCY }, worker));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { name: `raw argon2id verify (c=${LOGIN_CONCURRENCY})`, rps: latencies.length / elapsed, p50: pct(50), p99: pct(99), failed, total: latencies.length, steal: steal() };
}

/** The login-to-raw comparison: login and raw argon2id verify in alternating slices, [round][raw, login]. */
async function loginAgainstRaw(url: string, pid: number, password: string): Promise<Figures[][]> {
  const hash = await hashPassword(password);
  if (!hash.startsWith(ARGON2_PREFIX)) throw new Error(`unexpected argon2 parameters: ${hash.slice(0, 32)}`);
  const login = passwordLogin(url, pid, password);
  const raw: Slice = (seconds) => rawArgon2(hash, password, seconds);
  return alternate([raw, (seconds) => measureFor(login, seconds)], LOAD.loginRounds, LOAD.sliceSeconds);
}

export interface Server {
  url: string;
  pid: number;
}

export interface AccountFigures {
  /** /healthz of the same app: the kit's per-request cost (logging, request id, hooks) without auth or SQL. */
  health: Figures;
  /** The hand-written floor and A43 in alternating slices: [round][floor, read]. */
  readRounds: Figures[][];
  refresh: Figures;
  /** Raw argon2id verify and login in alternating slices: [round][raw, login]. */
  loginRounds: Figures[][];
}

/**
 * Logs the bench users in, then runs the cases in order: health, the floor against A43, refresh, then login
 * against raw argon2id.
 */
export async function accountBench(account: Server, floor: Server, floorToken: string, password: string): Promise<AccountFigures> {
  const { url, pid } = account;
  const reader = await login(url, READER, password);
  const sessions = await inBatches(2 * LOAD.connections, LOGIN_CONCURRENCY, () => login(url, REFRESHER, password));
  const health = await measure({ name: 'GET /healthz (account app, no auth/SQL)', url: `${url}/healthz`, pid });
  const floorRead = sessionsRead(floor.url, floor.pid, floorToken, 'minimal authenticated read (floor)');
  const read = sessionsRead(url, pid, reader.accessToken);
  const readRounds = await alternate([floorRead, read].map((c) => (seconds: number) => measureFor(c, seconds)), LOAD.rounds, LOAD.sliceSeconds);
  const refreshFigures = await refresh(url, pid, sessions.map((s) => s.refreshCookie));
  const loginRounds = await loginAgainstRaw(url, pid, password);
  return { health, readRounds, refresh: refreshFigures, loginRounds };
}
