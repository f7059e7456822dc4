/**
 * The better-auth peer of `npm run bench` (issue 15): better-auth with its SQLite adapter (better-sqlite3)
 * and email+password sign-in, in its own package bench/peers/better-auth (installed here on first use with
 * `npm ci`) and its own process, against our account server in the same run, at the same concurrency and
 * in alternating slices:
 *   - its session read, GET /api/auth/get-session with the session cookie (no cookie cache, so every read
 *     looks the session up), against our A43 read;
 *   - its sign-in, POST /api/auth/sign-in/email, against our login, both hashing with argon2id at our
 *     parameters (the peer's stored hash is checked to carry them).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARGON2_PREFIX, cyclingLogin, login, passwordLogin, sessionsRead } from './account.js';
import { alternate, BENCH_DIR, LOAD, measureFor, startChild, startServer, type CannonCase, type Figures, type ServerChild } from './lib.js';
import { LOGIN_USERS, READER } from './users.js';

const PEER_DIR = path.join(BENCH_DIR, 'peers', 'better-auth');
const SESSION_COOKIE = 'better-auth.session_token';
const emailOf = (username: string) => `${username}@bench.test`;

/** Installs the peer's own package from its lock file when its node_modules is missing. */
export function ensurePeerInstalled(): void {
  if (fs.existsSync(path.join(PEER_DIR, 'node_modules', 'better-auth', 'package.json'))) return;
  process.stderr.write('peer: installing bench/peers/better-auth (npm ci, once)\n');
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

async function startPeer(password: string): Promise<ServerChild> {
  ensurePeerInstalled();
  const users = [READER, ...LOGIN_USERS].map(emailOf).join(',');
  const peer = await startChild('better-auth peer', [path.join(PEER_DIR, 'server.mjs')], { BENCH_PASSWORD: password, BENCH_PEER_USERS: users });
  const prefix = String(peer.ready.hashPrefix);
  if (!prefix.startsWith(ARGON2_PREFIX)) {
    await peer.stop();
    throw new Error(`the peer does not hash with our argon2id parameters: ${prefix}`);
  }
  return peer;
}

/** Signs in once over HTTP and returns the session cookie (name=value). */
async function signIn(url: string, username: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ email: emailOf(username), password }),
  });
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (res.status !== 200 || !cookie) throw new Error(`peer sign-in as ${username} failed (${res.status})`);
  return cookie.split(';')[0]!;
}

function getSession(url: string, pid: number | undefined, cookie: string): CannonCase {
  return {
    name: 'better-auth GET /api/auth/get-session',
    url: `${url}/api/auth/get-session`,
    headers: { cookie },
    // A missing or unknown session answers 200 with `null`: only a session counts.
    check: (status, body) => status === 200 && body.startsWith('{"session":{'),
    pid,
  };
}

function signInEmail(url: string, pid: number | undefined, password: string): CannonCase {
  const body = (username: string) => ({ email: emailOf(username), password });
  return cyclingLogin('better-auth POST sign-in/email', url, '/api/auth/sign-in/email', pid, body, (status, text) =>
    status === 200 && text.includes('"token":"'),
  );
}

export interface PeerFigures {
  /** [round][ours A43, better-auth get-session] */
  readRounds: Figures[][];
  /** [round][our login, better-auth sign-in] */
  loginRounds: Figures[][];
}

const slices = (cases: CannonCase[]) => cases.map((c) => (seconds: number) => measureFor(c, seconds));

export async function peerBench(password: string): Promise<PeerFigures> {
  const ours = await startServer('account', { BENCH_PASSWORD: password });
  try {
    const peer = await startPeer(password);
    try {
      const [ourPid, peerPid] = [ours.child.pid, peer.child.pid];
      const reader = await login(ours.url, READER, password);
      const cookie = await signIn(peer.url, READER, password);
      const reads = [sessionsRead(ours.url, ourPid, reader.accessToken), getSession(peer.url, peerPid, cookie)];
      const readRounds = await alternate(slices(reads), LOAD.rounds, LOAD.sliceSeconds);
      const logins = [passwordLogin(ours.url, ourPid, password), signInEmail(peer.url, peerPid, password)];
      const loginRounds = await alternate(slices(logins), LOAD.loginRounds, LOAD.sliceSeconds);
      return { readRounds, loginRounds };
    } finally {
      await peer.stop();
    }
  } finally {
    await ours.stop();
  }
}
