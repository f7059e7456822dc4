import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { relayFixture } from '../helpers/relay-fixtures.js';
import { RELAY_ENV, relayToken } from '../helpers/relay.js';
import { eachDatabase, postgresWithRedis, type Variant } from '../helpers/services.js';

/**
 * Issue 25, "Tests and a chaos benchmark": OpenAI-compatible fakes that flap on a schedule behind several
 * channels, one of them disabled by hand, and a few hundred calls (Chat Completions and Responses, streamed
 * and whole; Anthropic Messages and Gemini when the gateway serves those caller formats) driven through the
 * relay. The draws are seeded (the seed is printed; CHAOS_SEED=<n> repeats them, up to the order in which
 * concurrent calls reach the fakes).
 *
 * The schedule: a storm (every flaky channel answers from the chaos mix: 30 % 5xx, 429 with Retry-After,
 * hangs past the first-byte deadline, empty streams, HTTP 200 error payloads, cuts before and after output;
 * each flaky channel starts with every kind once, in a fixed order, then draws), then down (the tripping
 * channels fail every call until both are open), then calm (all answer, slowly). `flaky-a` and `flaky-b` keep the global breaker threshold (never reached: they keep taking
 * traffic, so every failure kind is met and retried many times); `trip-a` and `trip-b` open after 3 counted
 * failures within 10 s, cool down 1 s (at most 2 s), and are probed by at most K = 2 calls at once. `good`
 * always answers (priority 0, the last resort); `off` answers too, has the highest priority, and is disabled
 * by hand (G11 status 2): it must never be asked.
 *
 * Every call is checked against the relay log and against the fakes' own request log (the call's id travels
 * in its prompt): the channels tried, in order, each once; a clean answer from the last one after any number
 * of failures before output; after output began, the stream of that one channel and then the error event of
 * the caller's format, nothing else. The golden error endings are the encoders' fixtures
 * (src/gateway/relay/formats/<format>/fixtures of chat, responses, anthropic, gemini) driven end to end.
 * CHAOS_CALLS=<n> changes the storm's size; CHAOS_DUMP=<file> writes the fakes' request log there.
 */

const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.log(`relay chaos seed ${SEED} (CHAOS_SEED=${SEED} repeats the draws)`);

const KEY = 'sk-chaos-KEY-0123456789abcdef';
const fixture = (family: string, name: string) => relayFixture(`${family}/${name}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FIRST_BYTE_MS = 300;
const RETRY_AFTER_S = 1;
/** Calls already on their way to a channel when it was paused or opened may still reach it this long after. */
const IN_FLIGHT_MS = 300;
const PROBES = 2;
const STORM_CALLS = Number(process.env.CHAOS_CALLS ?? 240);
const CONCURRENCY = 10;

const FLAKY = ['flaky-a', 'flaky-b', 'trip-a', 'trip-b'] as const;
const TRIPPING = ['trip-a', 'trip-b'] as const;
const CHANNELS = [...FLAKY, 'good', 'off'] as const;
type ChannelName = (typeof CHANNELS)[number];

const ENV = {
  ...RELAY_ENV,
  GATEWAY_RELAY_ROUTE_CACHE_MS: '0',
  GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_MS),
  GATEWAY_RELAY_IDLE_TIMEOUT_MS: String(FIRST_BYTE_MS),
  GATEWAY_RELAY_BACKOFF_MS: '5',
  GATEWAY_RELAY_BACKOFF_MAX_MS: '20',
  GATEWAY_RETRY_TIMES: '6',
  GATEWAY_BREAKER_FAILURES: '10000',
  GATEWAY_BREAKER_WINDOW_SECONDS: '10',
  GATEWAY_BREAKER_COOLDOWN_SECONDS: '1',
  GATEWAY_BREAKER_MAX_COOLDOWN_SECONDS: '2',
  GATEWAY_BREAKER_PROBES: String(PROBES),
};

// ---- seeded draws ----

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const hash = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);

type Kind = 'ok' | 'http5xx' | 'rate429' | 'hang' | 'empty' | 'error200' | 'cut';
/** How a stream or body is cut: after whole events or in the middle of one; the connection reset, or closed cleanly (premature EOF). */
type Cut = 'reset' | 'eof' | 'reset-mid' | 'eof-mid';
const CUTS: Cut[] = ['reset', 'eof', 'reset-mid', 'eof-mid'];
const MIX: [Kind, number][] = [
  ['http5xx', 0.3],
  ['rate429', 0.02],
  ['hang', 0.06],
  ['empty', 0.06],
  ['error200', 0.06],
  ['cut', 0.1],
];
/** What each flaky channel answers first, in this order: every kind once, a cut of each kind (whole and streamed apart). */
const OPENING: Kind[] = ['http5xx', 'hang', 'empty', 'error200', 'cut', 'cut', 'cut', 'cut', 'rate429'];

interface Draw {
  kind: Kind;
  cut: Cut;
  /** Complete events (or body halves) before a cut; the part of the next event sent with a `-mid` cut. */
  at: number;
  part: number;
  status: number;
}

/** A channel's draws; whole and streamed calls each go through the opening, then draw. */
function drawer(name: string) {
  const random = mulberry32(SEED ^ hash(name));
  const n = { whole: 0, stream: 0 };
  return (stream: boolean): Draw => {
    const i = n[stream ? 'stream' : 'whole']++;
    let kind: Kind = 'ok';
    // One Retry-After in the opening (of whole calls): a pause takes the channel out for a second.
    if (i < OPENING.length && (!stream || OPENING[i] !== 'rate429')) kind = OPENING[i]!;
    else if (i < OPENING.length) kind = 'ok';
    else {
      let r = random();
      for (const [k, p] of MIX) {
        if (r < p) {
          kind = k;
          break;
        }
        r -= p;
      }
    }
    const cut = i < OPENING.length && kind === 'cut' ? CUTS[OPENING.slice(0, i).filter((k) => k === 'cut').length % 4]! : CUTS[Math.floor(random() * 4)]!;
    return { kind, cut, at: random(), part: random(), status: [500, 502, 503][Math.floor(random() * 3)]! };
  };
}

// ---- the fakes: OpenAI Chat Completions and Responses, whole and streamed ----

/** A call's words as each channel says them: the caller's text tells which channel answered. */
const words = (channel: string, marker: string) => ['from ', channel, ' ', marker];
const MARKER = /chaos-[a-z]+-\d+/;

type Format = 'chat' | 'responses';
interface Arrival {
  channel: ChannelName;
  marker: string;
  format: Format;
  stream: boolean;
  kind: Kind;
  cut: Cut | null;
  /** Whether output had begun when a stream was cut (a cut of a whole answer never has). */
  afterOutput: boolean;
  /** The text sent before a cut. */
  sent: string;
  /** The most text the caller may get: with a `-mid` cut after the next event's whole JSON, that event's too. */
  sentMax: string;
  at: number;
  end: number;
  /** The channel's status (G01) when the call arrived, read during calm only. */
  statusAtArrival: number | null;
  /** Probes of this channel in flight when it arrived (counted when it arrived at an open channel, in calm). */
  probesInFlight: number;
}

const chatChunk = (id: string, delta: Record<string, unknown>, finish: string | null = null) => ({ id: `chatcmpl-${id}`, object: 'chat.completion.chunk', created: 1, model: 'chaos', choices: [{ index: 0, delta, finish_reason: finish }] });
const USAGE = { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 };

/** The SSE events of a whole chat stream, the index of its first output event, and the text of its first k events. */
function chatEvents(id: string, pieces: string[]) {
  const events = [
    ...pieces.map((p, i) => `data: ${JSON.stringify(chatChunk(id, i === 0 ? { role: 'assistant', content: p } : { content: p }))}\n\n`),
    `data: ${JSON.stringify(chatChunk(id, {}, 'stop'))}\n\n`,
    `data: ${JSON.stringify({ ...chatChunk(id, {}), choices: [], usage: USAGE })}\n\n`,
    'data: [DONE]\n\n',
  ];
  return { events, firstOutput: 0, text: (k: number) => pieces.slice(0, k).join('') };
}

function responsesEvents(id: string, pieces: string[]) {
  const text = pieces.join('');
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`;
  const response = (status: string, output: unknown[], usage: unknown) => ({ id: `resp_${id}`, object: 'response', created_at: 1, status, model: 'chaos', output, usage });
  const item = (status: string, t: string) => ({ type: 'message', id: `msg_${id}`, status, role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [] }] });
  const events = [
    ev('response.created', { response: response('in_progress', [], null) }),
    ev('response.in_progress', { response: response('in_progress', [], null) }),
    ev('response.output_item.added', { output_index: 0, item: { ...item('in_progress', ''), content: [] } }),
    ev('response.content_part.added', { item_id: `msg_${id}`, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    ...pieces.map((p) => ev('response.output_text.delta', { item_id: `msg_${id}`, output_index: 0, content_index: 0, delta: p })),
    ev('response.output_text.done', { item_id: `msg_${id}`, output_index: 0, content_index: 0, text }),
    ev('response.content_part.done', { item_id: `msg_${id}`, output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } }),
    ev('response.output_item.done', { output_index: 0, item: item('completed', text) }),
    ev('response.completed', { response: response('completed', [item('completed', text)], { input_tokens: 5, output_tokens: 4, total_tokens: 9 }) }),
  ];
  // Output begins with the output item (the relay's reader: anything after created/in_progress).
  return { events, firstOutput: 2, text: (k: number) => pieces.slice(0, Math.max(0, k - 4)).join('') };
}

function wholeBody(format: Format, id: string, text: string): string {
  if (format === 'chat') return JSON.stringify({ id: `chatcmpl-${id}`, object: 'chat.completion', created: 1, model: 'chaos', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: USAGE });
  return JSON.stringify({ id: `resp_${id}`, object: 'response', created_at: 1, status: 'completed', model: 'chaos', output: [{ type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }], usage: { input_tokens: 5, output_tokens: 4, total_tokens: 9 } });
}

/**
 * The chaos upstream: one fake HTTP server, each channel under its own path prefix, answering by the
 * schedule (`phase`) and its channel's draws; every request is logged with its call's marker and times.
 */
async function startChaos(statusOf: (name: ChannelName) => Promise<number>) {
  const log: Arrival[] = [];
  const draws = new Map<string, (stream: boolean) => Draw>(FLAKY.map((n) => [n, drawer(n)]));
  const state = { phase: 'storm' as 'storm' | 'down' | 'calm', calmDelayMs: 250 };
  /** Per channel: when each Retry-After it sent began and ended (fake's clock). */
  const pauses = new Map<string, { from: number; until: number }[]>();
  const probes = new Map<string, number>();
  let n = 0;

  const handle = (channel: ChannelName, format: Format) => async (r: Seen, res: http.ServerResponse) => {
    const marker = MARKER.exec(r.body)?.[0] ?? `unmarked-${++n}`;
    const stream = r.json?.stream === true;
    const flaky = (FLAKY as readonly string[]).includes(channel);
    const a: Arrival = { channel, marker, format, stream, kind: 'ok', cut: null, afterOutput: false, sent: '', sentMax: '', at: Date.now(), end: 0, statusAtArrival: null, probesInFlight: 0 };
    log.push(a);
    let probe = false;
    if (flaky && state.phase === 'calm') {
      a.statusAtArrival = await statusOf(channel);
      if (a.statusAtArrival === 3) {
        probe = true;
        probes.set(channel, (probes.get(channel) ?? 0) + 1);
        a.probesInFlight = probes.get(channel)!;
      }
    }
    res.on('close', () => {
      a.end = Date.now();
      if (probe) probes.set(channel, probes.get(channel)! - 1);
    });
    const tripping = (TRIPPING as readonly string[]).includes(channel);
    const d: Draw =
      flaky && state.phase === 'storm' ? draws.get(channel)!(stream) : tripping && state.phase === 'down' ? { kind: 'http5xx', cut: 'reset', at: 0, part: 0, status: 503 } : { kind: 'ok', cut: 'reset', at: 0, part: 0, status: 200 };
    if (flaky && state.phase === 'calm') await sleep(state.calmDelayMs);
    a.kind = d.kind;
    const id = marker.replace(/\W/g, '');
    const pieces = words(channel, marker);
    switch (d.kind) {
      case 'http5xx':
        return sendJson(res, d.status, { error: { message: `chaos ${d.status}`, type: 'server_error' } });
      case 'rate429': {
        const now = Date.now();
        pauses.set(channel, [...(pauses.get(channel) ?? []), { from: now, until: now + RETRY_AFTER_S * 1000 }]);
        res.setHeader('retry-after', String(RETRY_AFTER_S));
        return sendJson(res, 429, { error: { message: 'chaos: slow down', type: 'requests', code: 'rate_limit_exceeded' } });
      }
      case 'hang':
        // No status line (or, for half the streams, headers and then nothing): past the first-byte (idle) deadline.
        if (stream && d.at < 0.5) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.flushHeaders();
        }
        return new Promise<void>((resolve) => {
          const t = setTimeout(() => (res.destroy(), resolve()), 10_000);
          res.on('close', () => (clearTimeout(t), resolve()));
        });
      case 'empty':
        if (!stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return void res.end();
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (format === 'chat') return void res.end('data: [DONE]\n\n');
        return void res.end(responsesEvents(id, pieces).events.slice(0, 2).join(''));
      case 'error200':
        if (!stream) return sendJson(res, 200, { error: { message: 'chaos: the model is overloaded', type: 'server_error' } });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (format === 'chat') return void res.end(`data: ${JSON.stringify({ error: { message: 'chaos: the model is overloaded', type: 'server_error' } })}\n\n`);
        return void res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message: 'chaos: the model is overloaded', param: null, sequence_number: 0 })}\n\n`);
      case 'cut': {
        a.cut = d.cut;
        const reset = d.cut.startsWith('reset');
        if (!stream) {
          const body = wholeBody(format, id, pieces.join(''));
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(body.slice(0, 1 + Math.floor(d.part * (body.length - 2))));
          return void (reset ? res.destroy() : res.end());
        }
        const s = format === 'chat' ? chatEvents(id, pieces) : responsesEvents(id, pieces);
        // At least the first output event, never the proper end.
        const last = format === 'chat' ? pieces.length : s.events.length - 1;
        const k = s.firstOutput + 1 + Math.floor(d.at * (last - s.firstOutput - 1));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let out = s.events.slice(0, k).join('');
        let whole = false;
        if (d.cut.endsWith('-mid')) {
          const next = s.events[k]!;
          const part = 1 + Math.floor(d.part * (next.length - 2));
          // Its data line whole but not ended (no newline, no blank line): a line reader may take it, or not.
          whole = part >= next.length - 2;
          out += next.slice(0, part);
        }
        a.afterOutput = true;
        a.sent = s.text(k);
        a.sentMax = s.text(whole ? k + 1 : k);
        res.write(out);
        // Let the bytes leave before the cut.
        return new Promise<void>((resolve) => setTimeout(() => (reset ? res.destroy() : res.end(), resolve()), 10));
      }
      default: {
        if (!stream) {
          const body = wholeBody(format, id, pieces.join(''));
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          return void res.end(body);
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end((format === 'chat' ? chatEvents(id, pieces) : responsesEvents(id, pieces)).events.join(''));
      }
    }
  };

  const routes: Record<string, (r: Seen, res: http.ServerResponse) => Promise<void> | void> = {};
  for (const c of CHANNELS) {
    routes[`POST /${c}/v1/chat/completions`] = handle(c, 'chat');
    routes[`POST /${c}/v1/responses`] = handle(c, 'responses');
  }
  const up = await startFakeUpstream(routes);
  return { up, log, state, pauses };
}

// ---- the callers ----

type Caller = 'chat' | 'responses' | 'anthropic' | 'gemini';
interface Shape {
  caller: Caller;
  stream: boolean;
}

interface SseEvent {
  event: string | null;
  data: string;
}

/** Server-sent events as a client reads them (a blank line dispatches; an unterminated event at the end is `tail`). */
function parseSse(text: string): { events: SseEvent[]; summary: any; tail: string } {
  const events: SseEvent[] = [];
  let summary: any = null;
  let event: string | null = null;
  let data: string[] = [];
  let pending = '';
  const lines = text.split('\n');
  const tail = lines.pop() ?? '';
  for (const line of lines) {
    pending += line + '\n';
    if (line === '') {
      if (data.length) events.push({ event, data: data.join('\n') });
      event = null;
      data = [];
      pending = '';
    } else if (line.startsWith(': relay-summary ')) summary = JSON.parse(line.slice(': relay-summary '.length));
    else if (line.startsWith(':')) continue;
    else if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return { events, summary, tail: pending + tail };
}

function relayPath(shape: Shape, model: string): string {
  if (shape.caller === 'chat') return '/relay/v1/chat/completions';
  if (shape.caller === 'responses') return '/relay/v1/responses';
  if (shape.caller === 'anthropic') return '/relay/v1/messages';
  return `/relay/v1beta/models/${model}:${shape.stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
}

function relayBody(shape: Shape, model: string, marker: string): Record<string, unknown> {
  const prompt = `say hello (${marker})`;
  if (shape.caller === 'chat') return { model, stream: shape.stream, messages: [{ role: 'user', content: prompt }] };
  if (shape.caller === 'responses') return { model, stream: shape.stream, input: prompt };
  if (shape.caller === 'anthropic') return { model, stream: shape.stream, max_tokens: 64, messages: [{ role: 'user', content: prompt }] };
  return { contents: [{ role: 'user', parts: [{ text: prompt }] }] };
}

interface Reply {
  status: number;
  text: string;
  summary: any;
}

async function callRelay(base: string, shape: Shape, model: string, marker: string): Promise<Reply> {
  const res = await fetch(base + relayPath(shape, model), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await relayToken()}`, 'x-request-id': marker },
    body: JSON.stringify(relayBody(shape, model, marker)),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const header = res.headers.get('x-relay-summary');
  const summary = header ? JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) : shape.stream ? parseSse(text).summary : null;
  return { status: res.status, text, summary };
}

/**
 * What the caller got: a clean answer (its text), or a stream that broke after output began and ended with
 * its format's error event (the text before it). Anything else is an assertion failure.
 */
function readReply(shape: Shape, r: Reply): { clean: boolean; text: string } {
  const where = `${shape.caller}${shape.stream ? ' stream' : ''}: ${r.status} ${r.text.slice(0, 600)}`;
  if (!shape.stream) {
    assert.equal(r.status, 200, where);
    const j = JSON.parse(r.text);
    if (shape.caller === 'chat') return { clean: true, text: j.choices[0].message.content };
    if (shape.caller === 'responses') {
      assert.equal(j.status, 'completed', where);
      return { clean: true, text: j.output[0].content[0].text };
    }
    if (shape.caller === 'anthropic') return { clean: true, text: j.content.map((c: any) => c.text ?? '').join('') };
    return { clean: true, text: j.candidates[0].content.parts.map((p: any) => p.text ?? '').join('') };
  }
  assert.equal(r.status, 200, where);
  const { events, tail } = parseSse(r.text);
  assert.equal(tail, '', `an unterminated event at the end: ${where}`);
  const json = events.map((e) => {
    if (e.data === '[DONE]') return '[DONE]';
    try {
      return JSON.parse(e.data);
    } catch {
      assert.fail(`an event whose data is not JSON (${JSON.stringify(e.data)}): ${where}`);
    }
  });
  const last = json.at(-1);
  const lastEvent = events.at(-1)!;
  if (shape.caller === 'chat') {
    const text = json.map((j: any) => j?.choices?.[0]?.delta?.content ?? '').join('');
    if (last === '[DONE]') {
      assert.ok(json.every((j: any) => j === '[DONE]' || !j.error), where);
      return { clean: true, text };
    }
    assert.equal(last.error?.code, 'relay_stream_interrupted', where);
    assert.ok(json.slice(0, -1).every((j: any) => j !== '[DONE]' && !j.error), where);
    return { clean: false, text };
  }
  if (shape.caller === 'responses') {
    const text = json.filter((j: any) => j.type === 'response.output_text.delta').map((j: any) => j.delta).join('');
    for (let i = 0; i < events.length; i++) assert.equal(events[i]!.event, json[i].type, `event name and type differ: ${where}`);
    if (last.type === 'response.completed') return { clean: true, text };
    // An error event; after the pivot encoder's, response.failed with the output so far.
    const error = last.type === 'response.failed' ? json.at(-2) : last;
    assert.equal(error.type, 'error', where);
    assert.equal(error.code, 'relay_stream_interrupted', where);
    assert.ok(!json.some((j: any) => j.type === 'response.completed'), where);
    return { clean: false, text };
  }
  if (shape.caller === 'anthropic') {
    const text = json.filter((j: any) => j.type === 'content_block_delta').map((j: any) => j.delta?.text ?? '').join('');
    if (last.type === 'message_stop') return { clean: true, text };
    assert.equal(lastEvent.event, 'error', where);
    assert.equal(last.type, 'error', where);
    assert.ok(!json.some((j: any) => j.type === 'message_stop'), where);
    return { clean: false, text };
  }
  const text = json.map((j: any) => (j.candidates?.[0]?.content?.parts ?? []).map((p: any) => p.text ?? '').join('')).join('');
  if (!last.error) {
    assert.ok(json.some((j: any) => j.candidates?.[0]?.finishReason), where);
    return { clean: true, text };
  }
  assert.ok(last.error.code >= 500, where);
  return { clean: false, text };
}

async function metricsOf(s: GatewayServer): Promise<string> {
  return (await fetch(`${s.url}/metrics`, s.ctx.config.opsToken ? { headers: { authorization: `Bearer ${s.ctx.config.opsToken}` } } : {})).text();
}
const transitions = (text: string, to: string) => Number(new RegExp(`relay_breaker_transitions_total\\{[^}]*to="${to}"[^}]*\\} (\\d+)`).exec(text)?.[1] ?? 0);

/** Whether the gateway serves a caller format (another session adds Anthropic and Gemini callers). */
async function serves(base: string, caller: Caller): Promise<boolean> {
  const res = await fetch(base + relayPath({ caller, stream: false }, 'probe-model'), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${await relayToken()}` }, body: '{}' });
  await res.arrayBuffer();
  return res.status !== 404;
}

// ---- the chaos run ----

eachDatabase('relay chaos: flapping upstreams, breakers, Retry-After, failover and stream endings', (v) => {
  let chaos: Awaited<ReturnType<typeof startChaos>>;
  let a: GatewayServer;
  let b: GatewayServer | null = null;
  let root: StaffClient;
  const ids = new Map<ChannelName, number>();
  const model = `chaos-${v.name}`;
  let callers: Caller[] = ['chat', 'responses'];

  const statusRow = async (id: number) => a.ctx.db.selectFrom('channels').select(['status', 'other_info']).where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    chaos = await startChaos(async (name) => Number((await statusRow(ids.get(name)!)).status));
    a = await startGateway(v, { env: ENV });
    // PostgreSQL + Redis: a second instance on the same database and Redis shares the breakers; calls alternate.
    if (v.redisUrl) b = await startGateway(v, { env: ENV, shareWith: a });
    root = await a.staff('root', 'root');
    await a.services.ratios.setCurrent({ model_ratio: { [model]: 1 } });
    const settings: Partial<Record<ChannelName, object>> = {
      'trip-a': { breaker_failures: 3, breaker_window_seconds: 10, breaker_cooldown_seconds: 1 },
      'trip-b': { breaker_failures: 3, breaker_window_seconds: 10, breaker_cooldown_seconds: 1 },
    };
    for (const name of CHANNELS) {
      const priority = name === 'off' ? 100 : name === 'good' ? 0 : 10;
      const s = settings[name];
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${chaos.up.url}/${name}`, models: model, key: KEY, priority, auto_ban: 1, ...(s ? { settings: JSON.stringify(s) } : {}) } });
      assert.equal(r.status, 200, r.text);
      ids.set(name, r.json.data.ids[0]);
    }
    // G11: disabled by hand.
    assert.equal((await root.post(`/api/channel/${ids.get('off')}/status`, { status: 2 })).status, 200);
    for (const c of ['anthropic', 'gemini'] as const) if (await serves(a.url, c)) callers.push(c);
    if (callers.length === 2) console.log('relay chaos: the gateway serves no Anthropic or Gemini caller format (/relay/v1/messages, /relay/v1beta): only Chat Completions and Responses callers are driven');
  });
  after(async () => {
    const text = a.everything() + (b?.everything() ?? '');
    assert.ok(!text.includes(KEY), 'an upstream key leaked');
    await b?.close();
    await a.close();
    await chaos.up.close();
  });

  test(`storm then calm: ${STORM_CALLS} calls; every answer clean or properly ended, every channel tried at most once, breakers open, probe and close`, async () => {
    const instances = [a, ...(b ? [b] : [])];
    const shapes: Shape[] = callers.flatMap((caller) => [{ caller, stream: false }, { caller, stream: true }]);
    // Watch the tripping channels' status (G01's status and other_info) all along.
    const timeline = new Map<string, { at: number; status: number; reason: string }[]>(TRIPPING.map((n) => [n, []]));
    let watching = true;
    const sample = async () => {
      for (const name of TRIPPING) {
        const row = await statusRow(ids.get(name)!);
        const seen = timeline.get(name)!;
        const reason = String(JSON.parse(row.other_info || '{}').status_reason ?? '');
        if (seen.at(-1)?.status !== row.status || seen.at(-1)?.reason !== reason) seen.push({ at: Date.now(), status: row.status, reason });
      }
    };
    const watcher = (async () => {
      while (watching) {
        await sample();
        await sleep(25);
      }
    })();

    const calls: { marker: string; shape: Shape; reply: Reply; via: number }[] = [];
    let next = 0;
    const drive = async (count: number, prefix: string) => {
      const end = next + count;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < end) {
            const i = next++;
            const shape = shapes[i % shapes.length]!;
            const via = i % instances.length;
            const marker = `chaos-${prefix}-${i}`;
            calls.push({ marker, shape, reply: await callRelay(instances[via]!.url, shape, model, marker), via });
          }
        }),
      );
    };

    const started = Date.now();
    await drive(STORM_CALLS, 'storm');
    const stormMs = Date.now() - started;

    // Down: the tripping channels fail every call until both are open (a probe may have closed one during the storm).
    chaos.state.phase = 'down';
    // A bound for a loaded machine (CI's two cores): the loop ends as soon as both are open.
    const openBy = Date.now() + 20_000;
    while ((await Promise.all(TRIPPING.map(async (n) => (await statusRow(ids.get(n)!)).status))).some((st) => st !== 3) && Date.now() < openBy) await drive(CONCURRENCY, 'down');

    // Calm: the flaky channels answer again (slowly); bursts of calls until both tripping channels are closed.
    chaos.state.phase = 'calm';
    const closedBy = Date.now() + 12_000;
    for (;;) {
      await drive(CONCURRENCY * 2, 'calm');
      const statuses = await Promise.all(TRIPPING.map(async (n) => (await statusRow(ids.get(n)!)).status));
      if (statuses.every((st) => st === 1) || Date.now() > closedBy) break;
      await sleep(100);
    }
    watching = false;
    await watcher;
    await sample();
    for (const s of instances) await s.relay.log.flush();

    // ---- every call against the relay log and the fakes' log ----
    const rows = await a.ctx.db.selectFrom('relay_log').select(['request_id', 'channel_id', 'status', 'error_code', 'attempts']).where('model', '=', model).execute();
    const byRequest = new Map(rows.map((r) => [r.request_id, r]));
    const nameOf = new Map([...ids].map(([n, id]) => [id, n]));
    const arrivals = new Map<string, Arrival[]>();
    for (const x of chaos.log) arrivals.set(x.marker, [...(arrivals.get(x.marker) ?? []), x]);
    const retried = new Map<string, number>();
    let interrupted = 0;
    const interruptedBy = new Map<Caller, number>();
    for (const c of calls) {
      const row = byRequest.get(c.marker);
      assert.ok(row, `no relay log row for ${c.marker}`);
      const tried = (JSON.parse(row.attempts) as { channel_id: number }[]).map((t) => nameOf.get(t.channel_id));
      const reached = (arrivals.get(c.marker) ?? []).sort((x, y) => x.at - y.at);
      assert.equal(new Set(tried).size, tried.length, `${c.marker} tried a channel twice: ${tried.join(', ')}`);
      assert.deepEqual(reached.map((x) => x.channel), tried, `${c.marker}: the fakes saw ${reached.map((x) => x.channel).join(', ')}, the relay log says ${tried.join(', ')}`);
      const served = reached.at(-1)!;
      for (const x of reached.slice(0, -1)) {
        assert.ok(x.kind !== 'ok' && !x.afterOutput, `${c.marker}: moved on from ${x.channel} after ${x.kind}`);
        const key = `${x.kind}${x.cut ? ` (${x.cut})` : ''}${x.stream ? ', streamed' : ', whole'}`;
        retried.set(key, (retried.get(key) ?? 0) + 1);
      }
      const got = readReply(c.shape, c.reply);
      assert.equal(nameOf.get(Number(row.channel_id)), served.channel, c.marker);
      if (got.clean) {
        assert.equal(served.kind, 'ok', `${c.marker}: a clean answer from ${served.channel}, which answered ${served.kind}`);
        assert.equal(got.text, words(served.channel, c.marker).join(''), `${c.marker}: the text of one channel, whole`);
        assert.equal(row.status, 200);
      } else {
        interrupted++;
        interruptedBy.set(c.shape.caller, (interruptedBy.get(c.shape.caller) ?? 0) + 1);
        assert.ok(served.kind === 'cut' && served.afterOutput, `${c.marker}: an error ending, but ${served.channel} answered ${served.kind}`);
        // The text of that one channel up to the cut (an Anthropic or Gemini encoder may hold back nothing; a
        // cut inside an event loses that event).
        assert.ok(words(served.channel, c.marker).join('').startsWith(got.text), `${c.marker}: ${JSON.stringify(got.text)} is not ${served.channel}'s`);
        assert.ok(served.sentMax.startsWith(got.text), `${c.marker}: more text than was sent (${JSON.stringify(got.text)}, ${JSON.stringify(served.sentMax)})`);
        assert.equal(row.error_code, 'relay_stream_interrupted');
        assert.equal(row.status, 502);
      }
    }
    assert.equal(chaos.log.filter((x) => x.channel === 'off').length, 0, 'the channel disabled by hand received requests');
    for (const kind of ['http5xx', 'hang', 'empty', 'error200'])
      for (const shape of [', streamed', ', whole']) assert.ok([...retried].some(([k]) => k.startsWith(kind) && k.endsWith(shape)), `no call was retried after ${kind}${shape}`);
    assert.ok([...retried].some(([k]) => k.startsWith('rate429')), 'no call was retried after a 429');
    for (const cut of CUTS) assert.ok(retried.get(`cut (${cut}), whole`), `no whole answer cut (${cut}) was retried`);

    // ---- Retry-After: nothing reaches a paused channel before its time ----
    for (const [channel, windows] of chaos.pauses) {
      for (const w of windows) {
        const early = chaos.log.filter((x) => x.channel === channel && x.at > w.from + IN_FLIGHT_MS && x.at < w.until - 20);
        assert.deepEqual(early.map((x) => `${x.marker} at +${x.at - w.from} ms`), [], `${channel} was paused for ${RETRY_AFTER_S} s (Retry-After) at ${w.from}`);
      }
    }
    for (const name of ['flaky-a', 'flaky-b']) assert.ok(chaos.pauses.get(name)?.length, `${name} never sent a Retry-After`);

    // ---- breakers: opened (status 3, reason), no traffic while open, probes ≤ K, closed by a probe ----
    const probeNotes: string[] = [];
    for (const name of TRIPPING) {
      const seen = timeline.get(name)!;
      const opened = seen.filter((x) => x.status === 3);
      // When it fails, what the gateways logged of their breakers says why (a probe not completed, say).
      const breakerLog = () => (a.everything() + (b?.everything() ?? '')).split('\n').filter((l) => l.includes('breaker')).slice(-12).join('\n');
      assert.ok(opened.length >= 1, `${name} never opened: ${JSON.stringify(seen)}\n${opened.length ? '' : breakerLog()}`);
      // The third failure asks the canned probe; while Retry-After pauses the channel (or a probe is under way) a later one does.
      for (const o of opened) assert.ok(Number(/^breaker: (\d+) failures within 10 s, the last /.exec(o.reason)?.[1]) >= 3, `${name} opened: ${o.reason}`);
      assert.equal(seen.at(-1)!.status, 1, `${name} did not close: ${JSON.stringify(seen)}`);
      assert.equal(seen.at(-1)!.reason, 'breaker: a probe succeeded');
      for (const o of opened) {
        // Open for at least the 1 s cooldown from (at most 25 ms before) when it was seen open.
        const during = chaos.log.filter((x) => x.channel === name && x.at > o.at + IN_FLIGHT_MS && x.at < o.at + 950);
        assert.deepEqual(during.map((x) => x.marker), [], `${name} received calls while open`);
      }
      const probes = chaos.log.filter((x) => x.channel === name && x.statusAtArrival === 3);
      assert.ok(probes.length >= 1, `${name} was never probed in calm`);
      const most = Math.max(...probes.map((x) => x.probesInFlight));
      assert.ok(most <= PROBES, `${name}: ${most} probes in flight at once (at most ${PROBES})`);
      probeNotes.push(`${name} ${probes.length} probes in calm, at most ${most} at once`);
    }
    // G01 shows the reason and time of the last state change.
    const listed = await root.get('/api/channel/?p=1&page_size=50');
    for (const name of TRIPPING) {
      const item = listed.json.data.items.find((x: any) => x.id === ids.get(name));
      assert.equal(item.status, 1);
      const info = JSON.parse(item.other_info);
      assert.equal(info.status_reason, 'breaker: a probe succeeded');
      assert.ok(Math.abs(info.status_time - Date.now() / 1000) < 60);
    }
    const metrics = await Promise.all(instances.map(metricsOf));
    const sum = (to: string) => metrics.reduce((n, m) => n + transitions(m, to), 0);
    assert.ok(sum('open') >= TRIPPING.length, `relay_breaker_transitions_total{to="open"} ${sum('open')}`);
    assert.ok(sum('closed') >= TRIPPING.length, `relay_breaker_transitions_total{to="closed"} ${sum('closed')}`);
    assert.ok(sum('open') + sum('reopened') >= sum('closed'));

    if (process.env.CHAOS_DUMP) fs.writeFileSync(process.env.CHAOS_DUMP, chaos.log.map((x) => `${x.at - started} ${x.channel} ${x.marker} ${x.kind} ${x.stream} ${x.end - x.at}`).join('\n'));
    const upstream = chaos.log.length;
    console.log(
      `relay chaos [${v.name}${b ? ', 2 instances' : ''}]: callers ${callers.join(', ')}; ${calls.length} calls (storm ${STORM_CALLS} in ${stormMs} ms), ${upstream} upstream requests (${(upstream / calls.length).toFixed(2)} per call), ` +
        `${interrupted} streams ended by an error event after output (${[...interruptedBy].map(([k, n]) => `${k} ${n}`).join(', ')}), ${calls.length - interrupted} clean; transitions open ${sum('open')}, reopened ${sum('reopened')}, closed ${sum('closed')}; ${probeNotes.join(', ')}; ` +
        `retried: ${[...retried].sort().map(([k, n]) => `${k} ×${n}`).join('; ')}; ` +
        `upstream requests by channel: ${CHANNELS.map((c) => `${c} ${chaos.log.filter((x) => x.channel === c).length}`).join(', ')}`,
    );
  });

  test('an HTTP 200 error payload is a failure the breaker counts, whatever the caller format', async () => {
    const up = await startFakeUpstream();
    const overloaded = { message: 'chaos: the model is overloaded', type: 'server_error' };
    for (const p of ['/v1/chat/completions', '/v1/responses']) {
      up.routes[`POST /e200${p}`] = (r, res) => {
        if (!r.json?.stream) return sendJson(res, 200, { error: overloaded });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(p === '/v1/responses' ? `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'server_error', message: overloaded.message, param: null, sequence_number: 0 })}\n\n` : `data: ${JSON.stringify({ error: overloaded })}\n\n`);
      };
      up.routes[`POST /fine${p}`] = (r, res) => {
        const format = p === '/v1/responses' ? 'responses' : 'chat';
        if (!r.json?.stream) return sendJson(res, 200, JSON.parse(wholeBody(format, 'fine', 'fine')));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end((format === 'chat' ? chatEvents('fine', ['fine']) : responsesEvents('fine', ['fine'])).events.join(''));
      };
    }
    try {
      for (const caller of ['chat', 'responses'] as const) {
        for (const stream of [false, true]) {
          const m = `e200-${caller}-${stream}-${v.name}`;
          await a.services.ratios.setCurrent({ model_ratio: { [model]: 1, [m]: 1 } });
          const made = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: `e200 ${m}`, base_url: `${up.url}/e200`, models: m, key: KEY, priority: 10, auto_ban: 1, settings: JSON.stringify({ breaker_failures: 3, breaker_cooldown_seconds: 60 }) } });
          await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: `fine ${m}`, base_url: `${up.url}/fine`, models: m, key: KEY } });
          const id = made.json.data.ids[0];
          for (let i = 0; i < 3; i++) {
            const r = await callRelay(a.url, { caller, stream }, m, `chaos-e200-${i}`);
            assert.equal(r.status, 200, r.text);
            assert.deepEqual(r.summary.attempts.map((x: any) => x.channel_id)[0], id);
          }
          // The third failure sends the channel test's request, which fails the same way: that opens it (issue 29).
          await a.relay.breaker.settled();
          const row = await statusRow(id);
          assert.equal(row.status, 3, `${caller}${stream ? ' stream' : ''}: three 200 error payloads did not open the breaker`);
          assert.match(JSON.parse(row.other_info).status_reason, /^breaker: 3 failures within 10 s, the last server_error: chaos: the model is overloaded; the channel test failed too: server_error$/);
        }
      }
    } finally {
      await up.close();
    }
  });

  test('golden endings: a stream cut after output ends with the error event of the caller format (fixtures of the encoders)', async (t) => {
    // The fake sends a fixture's upstream part, then ends the stream without its last event (premature EOF).
    // The channel maps the model to the fixtures' (gpt-4o-mini): the answers are compared byte for byte.
    const gold = `gold-${v.name}`;
    await a.services.ratios.setCurrent({ model_ratio: { [model]: 1, [gold]: 1 } });
    const up = await startFakeUpstream();
    const message = 'the upstream stream ended before its last event';
    let body = '';
    for (const p of ['/v1/chat/completions', '/v1/responses']) up.routes[`POST /g${p}`] = (_r, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(body);
      };
    try {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'golden', base_url: `${up.url}/g`, models: gold, key: KEY, model_mapping: JSON.stringify({ [gold]: 'gpt-4o-mini' }) } });
      assert.equal(r.status, 200, r.text);
      const stripSummary = (text: string) => text.replace(/: relay-summary .*\n\n$/, '');
      const chatCase = JSON.parse(fixture('caller-chat', 'error-stream.case.json'));

      // Chat caller, OpenAI channel: the upstream's lines pass as they came; then OpenAI's error data event.
      body = (chatCase.lines as string[]).join('\n') + '\n';
      let got = await callRelay(a.url, { caller: 'chat', stream: true }, gold, 'chaos-gold-1');
      assert.equal(stripSummary(got.text), fixture('caller-chat', 'error-stream.sse').replace(chatCase.error.message, message));

      // Responses caller, OpenAI channel (native): the upstream's events pass as they came, then an `error` event.
      const responsesSse = fixture('caller-responses', 'error-stream.sse');
      const blocks = responsesSse.split('\n\n').filter(Boolean).map((x) => x + '\n\n');
      const upstreamPart = blocks.filter((x) => !/^event: (error|response\.failed)\n/.test(x));
      const errorEvent = blocks.find((x) => x.startsWith('event: error\n'))!;
      body = upstreamPart.join('');
      got = await callRelay(a.url, { caller: 'responses', stream: true }, gold, 'chaos-gold-2');
      assert.equal(stripSummary(got.text), upstreamPart.join('') + errorEvent.replace(JSON.parse(fixture('caller-responses', 'error-stream.case.json')).error.message, message));

      // The same stream broken inside its last event (its data line sent, not its blank line): the error event
      // still comes as an event of its own.
      body = upstreamPart.join('').replace(/\n$/, '');
      got = await callRelay(a.url, { caller: 'responses', stream: true }, gold, 'chaos-gold-3');
      const broken = parseSse(stripSummary(got.text));
      assert.equal(broken.tail, '');
      assert.deepEqual(broken.events.map((e) => e.event), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'error']);
      for (const e of broken.events) JSON.parse(e.data);

      // Chat caller: a stream whose last line is cut in the middle (then EOF): no broken event reaches the caller.
      body = (chatCase.lines as string[]).join('\n') + '\n' + 'data: {"id":"chatcmpl-err1","object":"chat.completion.chu';
      got = await callRelay(a.url, { caller: 'chat', stream: true }, gold, 'chaos-gold-4');
      assert.equal(stripSummary(got.text), fixture('caller-chat', 'error-stream.sse').replace(chatCase.error.message, message));

      // Anthropic and Gemini callers over the same OpenAI channel (the pivot encoders), when served.
      const pivot: [Caller, string][] = [
        ['anthropic', 'caller-anthropic'],
        ['gemini', 'caller-gemini'],
      ];
      for (const [caller, dir] of pivot) {
        if (!callers.includes(caller)) {
          t.diagnostic(`${caller} caller format not served by this gateway: golden ending not checked`);
          continue;
        }
        const c = JSON.parse(fixture(dir, 'error-stream.case.json'));
        body = (c.chunks as unknown[]).map((x) => `data: ${JSON.stringify(x)}\n\n`).join('');
        got = await callRelay(a.url, { caller, stream: true }, gold, `chaos-gold-${caller}`);
        assert.equal(stripSummary(got.text), fixture(dir, 'error-stream.sse').replace(c.error.message, message));
      }
    } finally {
      await up.close();
    }
  });
});

// ---- two instances: a breaker opened, or a Retry-After received, through one keeps the other's traffic away ----

const shared = postgresWithRedis('relay chaos: breakers and Retry-After pauses shared by two instances through Redis [postgres+redis]');
if (shared) {
  sharedInstances(shared);
}

function sharedInstances(v: Variant) {
  test('relay chaos: breakers and Retry-After pauses shared by two instances through Redis [postgres+redis]', async () => {
    const mode: Record<string, 'ok' | 'fail' | 'rate'> = { opened: 'ok', paused: 'ok', backup: 'ok' };
    const up = await startFakeUpstream();
    for (const name of Object.keys(mode)) {
      up.routes[`POST /${name}/v1/chat/completions`] = (_r, res) => {
        if (mode[name] === 'fail') return sendJson(res, 500, { error: { message: 'boom' } });
        if (mode[name] === 'rate') {
          res.setHeader('retry-after', '30');
          return sendJson(res, 429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } });
        }
        sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: name }, finish_reason: 'stop' }], usage: USAGE });
      };
    }
    const a = await startGateway(v, { env: { ...ENV, GATEWAY_BREAKER_FAILURES: '3', GATEWAY_BREAKER_COOLDOWN_SECONDS: '30' } });
    // The second instance keeps its routing view for a minute: only the shared breaker state can keep it away.
    const b = await startGateway(v, { env: { ...ENV, GATEWAY_BREAKER_FAILURES: '3', GATEWAY_BREAKER_COOLDOWN_SECONDS: '30', GATEWAY_RELAY_ROUTE_CACHE_MS: '60000' }, shareWith: a });
    try {
      const root = await a.staff('root', 'root');
      await a.services.ratios.setCurrent({ model_ratio: { 'shared-open': 1, 'shared-pause': 1 } });
      for (const [name, model, priority] of [['opened', 'shared-open', 10], ['backup', 'shared-open', 0], ['paused', 'shared-pause', 10], ['backup', 'shared-pause', 0]] as const) {
        assert.equal((await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: model, key: KEY, priority, auto_ban: 1 } })).status, 200);
      }
      const chat = (s: GatewayServer, model: string, i: number) => callRelay(s.url, { caller: 'chat', stream: false }, model, `chaos-shared-${model}-${i}`);
      const hits = (name: string) => up.seen.filter((x) => x.path.startsWith(`/${name}/`)).length;
      // B reads both routes while everything is healthy, and keeps that view.
      assert.equal(JSON.parse((await chat(b, 'shared-open', 0)).text).choices[0].message.content, 'opened');
      assert.equal(JSON.parse((await chat(b, 'shared-pause', 0)).text).choices[0].message.content, 'paused');

      mode.opened = 'fail';
      for (let i = 1; i <= 3; i++) await chat(a, 'shared-open', i);
      mode.paused = 'rate';
      await chat(a, 'shared-pause', 1);
      mode.opened = 'ok';
      mode.paused = 'ok';
      const before = { opened: hits('opened'), paused: hits('paused') };
      for (let i = 10; i < 20; i++) {
        assert.equal(JSON.parse((await chat(b, 'shared-open', i)).text).choices[0].message.content, 'backup');
        assert.equal(JSON.parse((await chat(b, 'shared-pause', i)).text).choices[0].message.content, 'backup');
      }
      assert.equal(hits('opened'), before.opened, 'B sent calls to the channel whose breaker A opened');
      assert.equal(hits('paused'), before.paused, 'B sent calls to the channel A was told to leave alone (Retry-After)');
    } finally {
      await b.close();
      await a.close();
      await up.close();
    }
  });
}
