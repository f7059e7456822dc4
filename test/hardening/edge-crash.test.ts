import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import { describe, test } from 'node:test';
import { registerEdgeCommands } from '../../src/edge/cli.js';
import type { EdgeDB } from '../../src/edge/db.js';
import { openDatabase } from '../../src/kit/db/index.js';
import { runCli } from '../helpers/cli.js';
import { scrape, value } from '../helpers/metrics.js';
import { sendJson, startFakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { startGateway } from '../helpers/gateway.js';
import { RELAY_ENV, RELAY_SECRET } from '../helpers/relay.js';
import { POSTGRES_URL, freshDatabase, tempDir, variants, type Variant } from '../helpers/services.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

/**
 * Issue 21's crash test: the edge as its own process, SIGKILLed at random moments of 200 runs (admitted runs
 * executed by its worker, chat completions whole and streamed) and restarted each time; after the last
 * restart, the workers, the deadlines and `edge reconcile`, every run is settled exactly once and every wallet
 * adds up, and the edge's charges agree with the gateway's relay log. The seed is printed; EDGE_CRASH_SEED
 * replays its plan (calls, kill points, pauses; the timing of the processes varies with the machine's load).
 */

const RUNS = 200;
const CLIENTS = 12;
const OWNERS = ['acme', 'beta', 'gamma', 'delta'];
const START = 1_000_000;
/** model_ratio 2, completion_ratio 3: 100 prompt and 20 completion tokens cost (100 + 60) × 2 = 320 units. */
const RATIOS = { model_ratio: { 'gpt-4o': 2, 'broken-model': 1 }, completion_ratio: { 'gpt-4o': 3 } };
const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
const COST = 320;
const MODELS = { 'gpt-4o': { reserve: 1000, overdraft: 0 }, 'broken-model': { reserve: 200, overdraft: 0 } } as const;
const LEASE_MS = 1000;
/** About a restart (2–7 s here, plus the pauses): a killed worker's runs are taken over or reach their deadline. */
const TIMEOUT_MS = 6000;
const SEED = Number(process.env.EDGE_CRASH_SEED ?? crypto.randomInt(2 ** 31));

/** mulberry32: a small seeded generator, so a failing seed can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Kind = 'admitted' | 'chat' | 'stream';
interface Call {
  i: number;
  kind: Kind;
  owner: number;
  model: 'gpt-4o' | 'broken-model';
  /** Upstream delay: before a whole answer, or between two chunks of a stream. */
  delayMs: number;
}

interface KillPoint {
  /** Calls sent before it. */
  after: number;
  /** Then waits for the upstream's next answer to an admitted run. */
  onAnswer: boolean;
  /** And then this long. */
  delayMs: number;
  /** Before the restart. */
  pauseMs: number;
  /** Another kill this long after the restart (no further one after it). */
  againAfterMs: number | null;
}

/** The 200 calls and the kill points (calls sent before each kill, and a further delay so it lands mid-call). */
function planOf(seed: number) {
  const rnd = random(seed);
  const calls: Call[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = rnd();
    const kind: Kind = r < 0.45 ? 'admitted' : r < 0.75 ? 'chat' : 'stream';
    const model = rnd() < 0.06 ? 'broken-model' : 'gpt-4o';
    const slow = rnd() < 0.5;
    const delayMs = kind === 'stream' ? 20 + Math.floor(rnd() * 200) : slow ? 100 + Math.floor(rnd() * 1100) : 0;
    calls.push({ i, kind, owner: Math.floor(rnd() * OWNERS.length), model, delayMs });
  }
  // Kill points: after so many calls were sent, either a moment later (mid-call) or right after the upstream
  // answered an admitted run (while the gateway hands the answer back and the edge settles it). Some restarts
  // wait a while (a supervisor's pause, so deadlines may pass meanwhile) and some kills come back soon after
  // the restart (a crash loop, cutting the runs being taken over).
  // 3 or 4 kill points, at most 2 of them followed by a crash loop's second kill (a restart costs 2–8 s).
  const kills = 3 + Math.floor(rnd() * 2);
  let loops = 2;
  const points: KillPoint[] = [];
  const span = Math.floor((RUNS - 20) / kills);
  for (let k = 0; k < kills; k++) {
    const onAnswer = rnd() < 0.5;
    points.push({
      after: 10 + k * span + Math.floor(rnd() * (span - 10)),
      onAnswer,
      delayMs: onAnswer ? Math.floor(rnd() * 15) : Math.floor(rnd() * 500),
      // The last restart is not delayed: what its kill cut is left to `edge reconcile` more often.
      pauseMs: rnd() < 0.5 && k < kills - 1 ? Math.floor(rnd() * 2500) : 0,
      againAfterMs: rnd() < 0.5 && loops-- > 0 ? 100 + Math.floor(rnd() * 900) : null,
    });
  }
  return { calls, points };
}

function chunk(content: string | null, finish: string | null = null) {
  return { id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }] };
}

const delayIn = (text: string) => Number(/d=(\d+)/.exec(text)?.[1] ?? 0);

/** An OpenAI-compatible upstream answering with usage, after the delay the caller's text names (`d=<ms>`). */
function upstream() {
  return startFakeUpstream({
    'POST /v1/chat/completions': async (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model === 'broken-model') return sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error' } });
      const d = delayIn(JSON.stringify(r.json?.messages ?? ''));
      if (r.json?.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const word of ['Hello', ' there', ',', ' slowly', ' and', ' surely']) {
          if (res.destroyed) return;
          res.write(`data: ${JSON.stringify(chunk(word))}\n\n`);
          await sleep(d);
        }
        if (res.destroyed) return;
        res.write(`data: ${JSON.stringify(chunk(null, 'stop'))}\n\n`);
        res.write(`data: ${JSON.stringify({ ...chunk(null), choices: [], usage: USAGE })}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      await sleep(d);
      if (res.destroyed) return;
      sendJson(res, 200, { id: 'chatcmpl-w', object: 'chat.completion', created: 1, model: r.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: USAGE });
    },
    'POST /v1/responses': async (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model === 'broken-model') return sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error' } });
      await sleep(delayIn(String(r.json?.input ?? '')));
      if (res.destroyed) return;
      setImmediate(() => upstreamAnswered?.());
      const usage = { input_tokens: 100, output_tokens: 20, total_tokens: 120, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
      sendJson(res, 200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: r.json?.model, output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'done', annotations: [] }] }], usage });
    },
  });
}

/** Called when the upstream answers an admitted run (a kill point may wait for it). */
let upstreamAnswered: (() => void) | null = null;

/** What the client saw of one call: the whole answer, a refusal (an HTTP error), or nothing whole (cut). */
type ClientSaw = { outcome: 'answered' | 'refused' | 'cut'; runId?: string; requestId?: string };

async function send(urlOf: () => string, token: string, c: Call): Promise<ClientSaw> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const text = `d=${c.delayMs} call ${c.i}`;
  if (c.kind === 'admitted') {
    // A cut admission is sent once more with its Idempotency-Key: replayed when it was stored, else admitted now.
    const idem = { 'idempotency-key': `crash-${SEED}-${c.i}` };
    let last: ClientSaw = { outcome: 'cut' };
    for (let attempt = 0; attempt < 2 && last.outcome === 'cut'; attempt++) {
      if (attempt) await edgeUp();
      try {
        const res = await fetch(urlOf() + '/v1/responses', { method: 'POST', headers: { ...headers, ...idem }, body: JSON.stringify({ publicModelId: c.model, input: text }), signal: AbortSignal.timeout(20_000) });
        const json = await res.json();
        last = res.status === 202 ? { outcome: 'answered', runId: json.runId } : { outcome: 'refused' };
      } catch {
        last = { outcome: 'cut' };
      }
    }
    return last;
  }
  try {
    const stream = c.kind === 'stream';
    const res = await fetch(urlOf() + '/v1/chat/completions', {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: c.model, messages: [{ role: 'user', content: text }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = await res.text();
    if (res.status !== 200) return { outcome: 'refused' };
    // The edge names each call's run by its own request id, sent back in X-Request-Id.
    const requestId = res.headers.get('x-request-id') ?? undefined;
    if (stream) return { outcome: body.includes('data: [DONE]') && body.includes('"usage"') ? 'answered' : 'cut', requestId };
    return { outcome: JSON.parse(body).usage?.total_tokens === 120 ? 'answered' : 'cut', requestId };
  } catch {
    return { outcome: 'cut' };
  }
}

/** Resolves while the edge is up; set to a pending promise while it is being killed and restarted. */
let edgeUp: () => Promise<void> = async () => {};

async function runVariant(v: Variant, t: { diagnostic(s: string): void }) {
  const began = Date.now();
  const { calls, points } = planOf(SEED);
  const up = await upstream();
  const gateway = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0' } });
  const dataDir = tempDir('edge-crash-');
  const database = freshDatabase(v, `${dataDir}/edge.sqlite`);
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    EDGE_DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    PUBLIC_ADMISSION_MODE: 'controlled',
    EDGE_RELAY_URL: gateway.url,
    EDGE_RELAY_TOKEN_KEY: RELAY_SECRET,
    EDGE_RUN_WORKER: 'true',
    EDGE_RUN_POLL_MS: '50',
    EDGE_RUN_LEASE_MS: String(LEASE_MS),
    EDGE_RUN_TIMEOUT_MS: String(TIMEOUT_MS),
    EDGE_RUN_CONCURRENCY: '8',
    EDGE_DISPATCHER: 'false',
    EDGE_RATE_LIMIT_PER_MINUTE: '100000',
    EDGE_OWNER_CONCURRENCY: '1000',
    ...(v.redisUrl ? { REDIS_URL: v.redisUrl, REDIS_KEY_PREFIX: `crash${crypto.randomBytes(4).toString('hex')}:` } : {}),
  };
  const cli = async (...args: string[]) => {
    const r = await runCli(registerEdgeCommands, env, args);
    if (r.error) throw new Error(`edge ${args.join(' ')}: ${r.error}`);
    return r.lines;
  };
  let proc: (ServiceProcess & { port: number }) | null = null;
  const outputs: string[][] = [];
  try {
    // The gateway: OpenAI-compatible channels to the upstream, priced by the ratios above; the failing model
    // has its own, so its breaker opening does not take the served model's channel with it.
    const root = await gateway.staff('root', 'root');
    for (const model of Object.keys(RATIOS.model_ratio)) {
      const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: `fake ${model}`, base_url: up.url, models: model, key: 'sk-crash-upstream-0123456789' } });
      assert.equal(created.status, 200, created.text);
    }
    await gateway.services.ratios.setCurrent(RATIOS);
    // The edge's models, owners, wallets and keys, set with its CLI before it starts.
    for (const [id, m] of Object.entries(MODELS)) await cli('edge', 'model', 'set', id, '--reserve', String(m.reserve), '--overdraft', String(m.overdraft));
    const tokens: string[] = [];
    for (const owner of OWNERS) {
      await cli('edge', 'wallet', 'credit', '--owner', owner, '--amount', String(START));
      tokens.push((await cli('edge', 'key', 'issue', '--owner', owner)).at(-1)!);
    }

    proc = await startServiceProcess('edge', env);
    outputs.push(proc.output);
    let url = proc.url;

    // The load: CLIENTS loops send the calls in order; at each kill point the edge is SIGKILLed (calls in
    // flight are cut) and restarted on the same port, the loops waiting meanwhile.
    let next = 0;
    let started = 0;
    let kills = 0;
    let point = 0;
    let killing: Promise<void> = Promise.resolve();
    const seen: ClientSaw[] = [];
    const restartsMs: number[] = [];
    const timeline: string[] = [];
    const pausesMs: number[] = [];
    const kill = (p: Omit<KillPoint, 'after'>) => {
      killing = killing.then(async () => {
        // The next upstream answer (or, should none come, 3 s later), then the delay.
        if (p.onAnswer) await new Promise<void>((resolve) => ((upstreamAnswered = resolve), setTimeout(resolve, 3000)));
        upstreamAnswered = null;
        await sleep(p.delayMs);
        let back!: () => void;
        let broke!: (e: Error) => void;
        const restarted = new Promise<void>((resolve, reject) => ((back = resolve), (broke = reject)));
        restarted.catch(() => {});
        edgeUp = () => restarted;
        try {
          await proc!.kill9();
          kills++;
          timeline.push(`killed @${Date.now() - began}`);
          await sleep(p.pauseMs);
          pausesMs.push(p.pauseMs);
          const at = Date.now();
          // The same port (clients keep their address); another one should something have taken it meanwhile.
          proc = await startServiceProcess('edge', env, proc!.port).catch(() => startServiceProcess('edge', env));
          outputs.push(proc.output);
          url = proc.url;
          restartsMs.push(Date.now() - at);
          timeline.push(`up @${Date.now() - began}`);
          edgeUp = async () => {};
          back();
          if (p.againAfterMs !== null) kill({ onAnswer: false, delayMs: p.againAfterMs, pauseMs: p.pauseMs, againAfterMs: null });
        } catch (e) {
          broke(e as Error);
          throw e;
        }
      });
    };
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < RUNS) {
          const c = calls[next++]!;
          await edgeUp();
          started++;
          for (; point < points.length && started >= points[point]!.after; point++) kill(points[point]!);
          seen[c.i] = await send(() => url, tokens[c.owner]!, c);
        }
      }),
    );
    // A kill may queue another one (a crash loop): wait for the last.
    for (let last: Promise<void> | null = null; last !== killing; ) await (last = killing);

    // After the last restart: the worker finishes what it can take; the rest waits out its deadline.
    const edgeDb = await openDatabase<EdgeDB>(database.url);
    try {
      const open = () => edgeDb.db.selectFrom('edge_runs').select(['run_id', 'deadline_at']).where('status', 'in', ['reserved', 'running']).execute();
      const waitUntil = Date.now() + 30_000;
      for (;;) {
        const pending = (await open()).filter((r) => Number(r.deadline_at) > Date.now());
        if (!pending.length) break;
        assert.ok(Date.now() < waitUntil, `runs still open after 30 s: ${pending.map((r) => r.run_id).join(', ')}`);
        await sleep(100);
      }
      await sleep(50);
      const lines = await cli('edge', 'reconcile');
      const reconciled = lines.at(-1)!;
      // Reservations and settlements share transactions (the ledger's batches): how many, since the last restart.
      const m = await scrape(proc.url);
      const ledger = `${value(m, 'edge_ledger_pieces_total')} reservations and settlements in ${value(m, 'edge_ledger_batches_total')} commits since the last restart`;
      assert.equal(await proc.stop(), 0, 'the edge did not stop cleanly');
      proc = null;
      await gateway.relay.log.flush();

      const problems = await check(edgeDb.db, gateway, seen, calls, began);
      if (problems.length) problems.push(`timeline: ${timeline.join(', ')}`);
      const runs = await edgeDb.db.selectFrom('edge_runs').select(['run_id', 'status', 'cost', 'kind', 'attempts', 'error_code', 'output']).execute();
      const fromLog = runs.filter((r) => r.kind === 'async' && Number(r.attempts) > 1 && r.status === 'succeeded' && r.output === null).length;
      const errors = Object.entries(runs.reduce<Record<string, number>>((m, r) => (r.error_code ? ((m[r.error_code] = (m[r.error_code] ?? 0) + 1), m) : m), {})).map(([k, n]) => `${k} ${n}`).join(', ');
      const servedTwice = (await gateway.ctx.db.selectFrom('relay_log').select('request_id').where('caller', 'like', 'edge:%').where('error_code', 'is', null).groupBy('request_id').having((eb) => eb.fn.countAll(), '>', 1).execute()).length;
      const by = (s: string) => runs.filter((r) => r.status === s).length;
      const charged = runs.reduce((n, r) => n + Number(r.cost), 0);
      const sources = await edgeDb.db.selectFrom('edge_settlements').select(['source']).execute();
      const bySource = Object.entries(sources.reduce<Record<string, number>>((m, s) => ((m[s.source] = (m[s.source] ?? 0) + 1), m), {})).map(([k, n]) => `${k} ${n}`).join(', ');
      const cut = seen.filter((s) => s.outcome === 'cut').length;
      const summary =
        `edge crash [${v.name}] seed ${SEED}: ${kills} kills (restarts ${restartsMs.join('/')} ms after pauses ${pausesMs.join('/')} ms), ${RUNS} calls (${cut} cut at the client), ${runs.length} runs ` +
        `(${runs.filter((r) => r.kind === 'async').length} admitted): ${by('succeeded')} succeeded, ${by('failed')} failed (${errors}), ${by('cancelled')} cancelled; ` +
        `${runs.filter((r) => Number(r.attempts) > 1).length} taken over (${fromLog} of them settled from the gateway's log, ${servedTwice} runs served twice by the gateway); settled by ${bySource}; ledger: ${ledger}; ${charged} units charged; reconcile: ${reconciled}; ${((Date.now() - began) / 1000).toFixed(1)} s`;
      t.diagnostic(summary);
      assert.deepEqual(problems, [], `seed ${SEED} (replay with EDGE_CRASH_SEED=${SEED})`);
    } finally {
      await edgeDb.close();
    }
  } catch (e) {
    console.error(`edge crash [${v.name}] seed ${SEED} failed; edge output:\n${outputs.map((o) => o.join('')).join('\n--- restart ---\n').slice(-20_000)}`);
    throw e;
  } finally {
    edgeUp = async () => {};
    if (proc) await proc.kill9();
    await gateway.close();
    await up.close();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

type Gateway = Awaited<ReturnType<typeof startGateway>>;

/** Every invariant, as a list of what is wrong (empty when all hold). */
async function check(db: Awaited<ReturnType<typeof openDatabase<EdgeDB>>>['db'], gateway: Gateway, seen: ClientSaw[], calls: Call[], began: number) {
  const problems: string[] = [];
  const runs = await db.selectFrom('edge_runs').selectAll().execute();
  const settlements = new Map((await db.selectFrom('edge_settlements').selectAll().execute()).map((s) => [s.run_id, s]));
  const settlementCount = Number((await db.selectFrom('edge_settlements').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const settledEvents = new Map<string, number>();
  for (const e of await db.selectFrom('edge_outbox').select('payload').where('type', '=', 'wallet.settled@1').execute()) {
    const runId = JSON.parse(e.payload).runId as string;
    settledEvents.set(runId, (settledEvents.get(runId) ?? 0) + 1);
  }
  const owners = new Map((await db.selectFrom('edge_owners').selectAll().execute()).map((o) => [Number(o.id), o.name]));
  const models = new Map((await db.selectFrom('edge_models').selectAll().execute()).map((m) => [m.public_model_id, m]));
  const relayRows = await gateway.ctx.db.selectFrom('relay_log').select(['id', 'request_id', 'caller', 'error_code', 'quota', 'status', 'created_at', 'total_ms']).where('caller', 'like', 'edge:%').orderBy('id', 'desc').execute();
  const rowsOf = new Map<string, typeof relayRows>();
  for (const r of relayRows) rowsOf.set(`${r.request_id} ${r.caller}`, [...(rowsOf.get(`${r.request_id} ${r.caller}`) ?? []), r]);
  const runIds = new Set(runs.map((r) => r.run_id));

  if (settlementCount !== runs.length) problems.push(`${settlementCount} settlement rows for ${runs.length} runs`);
  for (const runId of settledEvents.keys()) if (!runIds.has(runId)) problems.push(`wallet.settled@1 for ${runId}, which is no run`);
  for (const r of relayRows) if (!runIds.has(r.request_id)) problems.push(`the gateway served ${r.request_id} for ${r.caller}, which is no run of the edge`);
  const chargedOf = new Map<number, number>();
  for (const run of runs) {
    const id = `${run.run_id} (${run.kind}, ${run.status}, attempts ${run.attempts})`;
    if (!['succeeded', 'failed', 'cancelled'].includes(run.status)) problems.push(`${id}: not final`);
    const s = settlements.get(run.run_id);
    if (!s) {
      problems.push(`${id}: no settlement`);
      continue;
    }
    if (settledEvents.get(run.run_id) !== 1) problems.push(`${id}: ${settledEvents.get(run.run_id) ?? 0} wallet.settled@1 events`);
    const charged = Number(s.charged);
    if (charged !== Number(run.cost)) problems.push(`${id}: settlement charged ${charged}, run cost ${run.cost}`);
    if (Number(s.reserved) !== Number(run.reserved_amount)) problems.push(`${id}: settlement reserved ${s.reserved}, run reserved ${run.reserved_amount}`);
    const cap = Number(run.reserved_amount) + Number(models.get(run.public_model_id)?.overdraft ?? 0);
    if (charged < 0 || charged > cap) problems.push(`${id}: charged ${charged} beyond its reservation ${run.reserved_amount} (+ overdraft)`);
    chargedOf.set(Number(run.owner_id), (chargedOf.get(Number(run.owner_id)) ?? 0) + charged);
    // The gateway's log of this run's calls (newest first): served once or more → charged that quota once;
    // never reached → 0; only failures (a stream cut by the kill) → what the newest says it cost.
    const rows = rowsOf.get(`${run.run_id} edge:owner-${run.owner_id}`) ?? [];
    const served = rows.filter((r) => r.error_code === null);
    if (served.length) {
      const quotas = served.map((r) => Math.min(Number(r.quota), cap));
      if (!quotas.includes(charged)) {
        const started = await db.selectFrom('edge_outbox').select(['payload', 'created_at']).where('type', '=', 'run.started@1').where('aggregate_id', '=', run.run_id).execute();
        problems.push(
          `${id}: the gateway served it (its log, newest first: ${rows.map((r) => `${r.status} ${r.error_code ?? 'served'} ${r.quota} @${Number(r.created_at) - began}+${r.total_ms}ms`).join(', ')}) but it was charged ${charged} (${s.source}); ` +
            `started ${started.map((e) => `#${JSON.parse(e.payload).attempt} @${Number(e.created_at) - began}`).join(', ')}, settled @${Number(s.created_at) - began}`,
        );
      }
    } else {
      const expected = rows.length ? Math.min(Number(rows[0]!.quota), cap) : 0;
      if (charged !== expected) problems.push(`${id}: the gateway ${rows.length ? `logged ${rows.map((r) => `${r.status} ${r.error_code} ${r.quota}`).join(', ')}` : 'never served it'} but it was charged ${charged} (${s.source})`);
    }
  }
  for (const w of await db.selectFrom('edge_wallets').selectAll().execute()) {
    const name = owners.get(Number(w.owner_id));
    const expected = START - (chargedOf.get(Number(w.owner_id)) ?? 0);
    if (Number(w.reserved) !== 0) problems.push(`wallet of ${name}: ${w.reserved} still reserved`);
    if (Number(w.balance) !== expected) problems.push(`wallet of ${name}: balance ${w.balance}, expected ${START} − Σ charged = ${expected}`);
  }
  // What the clients were told holds: an admission answered 202 has its run; a whole answer was charged.
  const byRequest = new Map(runs.map((r) => [`${owners.get(Number(r.owner_id))} ${r.request_id}`, r]));
  for (const c of calls) {
    const s = seen[c.i];
    if (s?.outcome !== 'answered') continue;
    if (c.kind === 'admitted') {
      if (!s.runId || !runIds.has(s.runId)) problems.push(`call ${c.i}: admitted as ${s.runId}, no such run`);
      continue;
    }
    const run = byRequest.get(`${OWNERS[c.owner]} ${s.requestId}`);
    if (!run) problems.push(`call ${c.i}: answered, no run`);
    else if (Number(run.cost) !== COST) problems.push(`call ${c.i}: answered whole, run ${run.run_id} charged ${run.cost} (${run.status})`);
    // The edge ends an answer (a stream's [DONE]) only once its settlement committed: never left to reconcile.
    else if (settlements.get(run.run_id)?.source !== 'sync') problems.push(`call ${c.i}: answered whole, but settled by ${settlements.get(run.run_id)?.source} (not before its answer ended)`);
  }
  return problems;
}

for (const v of variants().filter((x) => x.name !== 'mysql')) {
  describe(`edge crash (kill -9) [${v.name}${v.redisUrl ? '+redis' : ''}]`, () => {
    test(`${RUNS} runs, the edge SIGKILLed at random points and restarted: after reconcile every run is settled once and every wallet adds up`, { timeout: 300_000 }, async (t) => {
      await runVariant(v, t);
    });
  });
}

if (!POSTGRES_URL) {
  test('edge crash (kill -9) [postgres]', { skip: 'TEST_POSTGRES_URL not set: PostgreSQL variant skipped (CI sets it)' }, () => {});
}
