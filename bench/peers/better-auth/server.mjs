/**
 * The better-auth peer of `npm run bench` (bench/peer.ts starts it with plain node, in its own process).
 * better-auth with its SQLite adapter (a better-sqlite3 handle, WAL like ours), the email+password sign-in,
 * no cookie cache (every get-session reads the database) and no rate limit (ours runs with
 * CRITICAL_RATE_LIMIT_ENABLED=false in the bench). Its default scrypt is replaced by argon2id with our
 * parameters (src/kit/crypto/password.ts) so a sign-in costs the same hash as our login; the parent checks
 * the stored hash's parameters it reports. Seeds the users named in BENCH_PEER_USERS (comma-separated
 * emails) with BENCH_PASSWORD, then reports {url, hashPrefix} over IPC; stops on "stop" or when the parent
 * goes away.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { hash, verify } from '@node-rs/argon2';
import Database from 'better-sqlite3';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';

/** Our parameters: argon2id (algorithm 2), m=19456 KiB, t=2, p=1. */
const ARGON2 = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 };

async function main() {
  const password = process.env.BENCH_PASSWORD;
  const emails = (process.env.BENCH_PEER_USERS ?? '').split(',').filter(Boolean);
  if (!password || emails.length === 0) throw new Error('BENCH_PASSWORD and BENCH_PEER_USERS are required');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-better-auth-'));
  const db = new Database(path.join(dataDir, 'auth.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');

  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  const options = {
    baseURL: url,
    secret: 'bench-peer-secret-of-at-least-32-characters',
    database: db,
    emailAndPassword: {
      enabled: true,
      password: { hash: (plain) => hash(plain, ARGON2), verify: ({ hash: stored, password: plain }) => verify(stored, plain) },
    },
    session: { cookieCache: { enabled: false } },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    logger: { disabled: true },
  };
  const { runMigrations } = await getMigrations(options);
  await runMigrations();
  const auth = betterAuth(options);
  for (const email of emails) await auth.api.signUpEmail({ body: { email, password, name: email.split('@')[0] } });
  const { hashPrefix } = db.prepare(`select substr(password, 1, 32) as hashPrefix from account where providerId = 'credential' limit 1`).get();
  server.on('request', toNodeHandler(auth));

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close(() => {
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
    server.closeAllConnections();
  };
  process.on('message', (m) => m === 'stop' && stop());
  process.on('disconnect', stop);
  process.send({ url, hashPrefix });
}

main().catch((e) => {
  process.send?.({ error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
