/**
 * Server CPU per request, which moves much less than req/s when other processes share the machine:
 * `npx tsx bench/cpu-probe.ts bare floor health read` starts each server of bench/server.ts in its own
 * process, loads it with autocannon (20 connections, 2 s warm-up, 4 s measured) and divides the CPU time
 * the server used (all threads, and its main thread alone, from /proc) by the requests it served.
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import { cpuMeter, startServer } from './lib.js';
import { FLOOR_TOKEN, READER } from './users.js';

async function accessToken(url: string, password: string): Promise<string> {
  const res = await fetch(`${url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ username: READER, password }),
  });
  const body = (await res.json()) as { data?: { access_token?: string } };
  if (!body.data?.access_token) throw new Error(`login failed (${res.status})`);
  return body.data.access_token;
}

const CASES: Record<string, { server: string; path: string }> = {
  bare: { server: 'bare', path: '/' },
  floor: { server: 'floor', path: '/api/user/sessions' },
  health: { server: 'account', path: '/healthz' },
  read: { server: 'account', path: '/api/user/sessions' },
};

async function probe(name: string) {
  const c = CASES[name];
  if (!c) throw new Error(`unknown case "${name}" (${Object.keys(CASES).join(', ')})`);
  const password = crypto.randomBytes(18).toString('base64url');
  const s = await startServer(c.server, { BENCH_PASSWORD: password });
  try {
    const bearer = c.server === 'floor' ? FLOOR_TOKEN : name === 'read' ? await accessToken(s.url, password) : undefined;
    const opts = { url: s.url + c.path, connections: 20, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} };
    await autocannon({ ...opts, duration: 2 });
    const meter = cpuMeter(s.child.pid!);
    const r = await autocannon({ ...opts, duration: 4 });
    const n = r.requests.total;
    const cpu = meter(n);
    const failed = r.non2xx + r.errors;
    console.log(
      `${name.padEnd(7)} ${Math.round(n / r.duration).toLocaleString('en-US').padStart(7)} req/s   server CPU per request: ` +
        `${cpu?.all.toFixed(1)} µs all threads, ${cpu?.main.toFixed(1)} µs main thread${failed ? `   ${failed} FAILED` : ''}`,
    );
  } finally {
    await s.stop();
  }
}

for (const name of process.argv.slice(2)) await probe(name);
