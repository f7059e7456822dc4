/**
 * G33 "test all channels" over BENCH_CHANNEL_TESTS channels (default 1,000) against a fake OpenAI-compatible
 * upstream on loopback that answers each chat completion after BENCH_UPSTREAM_LATENCY_MS (default 20 ms).
 * The baseline is a bare loop of the same HTTP calls (same body, same concurrency, undici) from this
 * process to the same upstream, measured in the same run, alternating with the gateway. Target: the
 * gateway tests ≥ 0.8× the bare loop's calls per second, i.e. the run is bound by the upstream's latency.
 * The upstream and the gateway each run in their own process (`bench/channel-tests.ts upstream|serve`).
 *
 *   npx tsx bench/channel-tests.ts          prints the rows (also part of `npm run bench`)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { stealMeter, stealNote } from './lib.js';

const SELF = fileURLToPath(import.meta.url);
const CHANNELS = Number(process.env.BENCH_CHANNEL_TESTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CHANNEL_TEST_CONCURRENCY ?? 8);
const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 20);
const ROUNDS = Number(process.env.BENCH_CHANNEL_TEST_ROUNDS ?? 3);
const TARGET = 0.8;
const MODEL = 'gpt-4o-mini';
const KEY = 'sk-bench-channel-test-key';

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1,
  model: MODEL,
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 8, completion_tokens: 1, total_tokens: 9 },
});

/** Child mode: the fake upstream (answers every POST after LATENCY_MS). */
function upstream() {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(COMPLETION) });
        res.end(COMPLETION);
      }, LATENCY_MS),
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }));
  process.on('message', (m) => m === 'stop' && process.exit(0));
  process.on('disconnect', () => process.exit(0));
}

/** Child mode: the gateway on a fresh SQLite directory with CHANNELS channels pointing at the upstream. */
async function serve() {
  const { loadConfig } = await import('../src/config/index.js');
  const { createRuntime } = await import('../src/runtime.js');
  const { buildGatewayApp } = await import('../src/gateway/app.js');
  const dataDir = process.env.BENCH_DIR!;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
    GATEWAY_CHANNEL_TEST_CONCURRENCY: String(CONCURRENCY),
  });
  const runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
  const { app, services, ctx } = await buildGatewayApp(config, runtime);
  await services.staff.create('bench-root', 'root');
  const { token } = await services.staff.issueToken('bench-root');
  const sealed = services.channels.seal(KEY);
  const now = Math.floor(Date.now() / 1000);
  const rows = Array.from({ length: CHANNELS }, (_, i) => ({
    type: 1, key: sealed, status: 1, name: `bench-${i}`, weight: 0, created_time: now, base_url: process.env.BENCH_UPSTREAM_URL!,
    models: MODEL, group: 'default', priority: 0, tag: null, channel_info: '{}', other_info: '', settings: '', other: '',
  }));
  await ctx.db.transaction().execute(async (trx) => {
    for (let j = 0; j < rows.length; j += 500) await trx.insertInto('channels').values(rows.slice(j, j + 500) as never).execute();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', async (m) => {
    if (m !== 'stop') return;
    await app.close();
    await runtime.close();
    process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, token });
}

type Child = { url: string; token?: string; stop(): Promise<void> };

function child(mode: string, env: Record<string, string>): Promise<Child> {
  const c: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF, mode], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    c.once('exit', (code) => reject(new Error(`${mode} child exited with ${code}`)));
    c.once('message', (m: { url: string; token?: string }) => {
      c.removeAllListeners('exit');
      resolve({ ...m, stop: () => new Promise<void>((done) => (c.exitCode !== null ? done() : (c.once('exit', () => done()), c.send('stop')))) });
    });
  });
}

/** The same calls the gateway makes, from a plain loop: CHANNELS chat completions, CONCURRENCY at a time. */
async function bareLoop(upstreamUrl: string): Promise<number> {
  const pool = new Pool(upstreamUrl, { connections: CONCURRENCY });
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < CHANNELS) {
      next++;
      const r = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body });
      const text = await r.body.text();
      if (r.statusCode !== 200 || !JSON.parse(text).choices) throw new Error(`bare loop: upstream answered ${r.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return CHANNELS / seconds;
}

/** One G33 run through the gateway: start the job, poll GS02 until it ends; channels tested per second. */
async function gatewayRun(gw: Child): Promise<{ rate: number; result: unknown }> {
  const headers = { authorization: `Bearer ${gw.token}` };
  const started = performance.now();
  const start = await fetch(`${gw.url}/api/channel/test`, { headers });
  const body = (await start.json()) as { data?: { task_id?: string } };
  const taskId = body.data?.task_id;
  if (!taskId) throw new Error(`G33 did not start a job: ${JSON.stringify(body)}`);
  for (;;) {
    await new Promise((r) => setTimeout(r, 10));
    const r = (await (await fetch(`${gw.url}/api/system_task/${taskId}`, { headers })).json()) as { data: { status: string; progress: Record<string, number>; result: unknown } };
    if (r.data.status === 'running') continue;
    const seconds = (performance.now() - started) / 1000;
    if (r.data.status !== 'succeeded') throw new Error(`G33 job ended ${r.data.status}: ${JSON.stringify(r.data)}`);
    const ok = r.data.progress.succeeded;
    if (ok !== CHANNELS) throw new Error(`G33 tested ${ok} of ${CHANNELS} channels successfully: ${JSON.stringify(r.data.progress)}`);
    return { rate: CHANNELS / seconds, result: r.data.result };
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function channelTestBench(): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-g33-'));
  const up = await child('upstream', {});
  let gw: Child | null = null;
  try {
    gw = await child('serve', { BENCH_DIR: dataDir, BENCH_UPSTREAM_URL: up.url });
    await bareLoop(up.url); // warm-up of the upstream and of this process
    const bare: number[] = [];
    const gateway: number[] = [];
    const steal = stealMeter();
    for (let i = 0; i < ROUNDS; i++) {
      bare.push(await bareLoop(up.url));
      gateway.push((await gatewayRun(gw)).rate);
    }
    const ratio = median(gateway) / median(bare);
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    return [
      `G33 test all: ${CHANNELS} channels, upstream latency ${LATENCY_MS} ms, concurrency ${CONCURRENCY} (gateway and bare loop), ${ROUNDS} alternating rounds; ${stealNote(steal())}`,
      `  bare loop of the same calls: ${median(bare).toFixed(0)} calls/s (rounds: ${list(bare)}; bound ${((1000 / LATENCY_MS) * CONCURRENCY).toFixed(0)}/s)`,
      `  gateway G33 job:            ${median(gateway).toFixed(0)} channels/s (rounds: ${list(gateway)})`,
      `  ratio ${ratio.toFixed(3)}× bare; target ≥ ${TARGET}: ${ratio >= TARGET ? 'MET' : 'MISSED'}`,
    ];
  } finally {
    await gw?.stop();
    await up.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (mode === 'upstream') upstream();
else if (mode === 'serve') void serve();
else if (process.argv[1] === SELF) channelTestBench().then((lines) => console.log(lines.join('\n')), (e) => {
  console.error(e);
  process.exitCode = 1;
});
