import type http from 'node:http';
import { startEdge, type EdgeServer } from './edge.js';
import { startGateway, type GatewayServer } from './gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from './fake-upstream.js';
import { RELAY_ENV, RELAY_SECRET } from './relay.js';
import type { Variant } from './services.js';
import type { EdgeAdminHolder } from '../../src/contract/edge-admin.js';

export const UPSTREAM_KEY = 'sk-stack-upstream-KEY-0123456789';
/** model_ratio 2, completion_ratio 3: a call with 100 prompt and 20 completion tokens costs (100 + 60) × 2 = 320 units. */
export const RATIOS = { model_ratio: { 'gpt-4o': 2, 'text-embedding-3-small': 1, 'broken-model': 1, 'slow-model': 1 }, completion_ratio: { 'gpt-4o': 3 } };
export const CHAT_USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
export const CHAT_COST = 320;

/** A tool the fake upstreams call (Paris) when a request offers it, unless the request holds its result: then they say the weather. */
export const WEATHER_TOOL = 'get_weather';
export const WEATHER_TEXT = 'It is sunny in Paris';
const offersWeather = (tools: unknown) => JSON.stringify(tools ?? []).includes(`"${WEATHER_TOOL}"`);

function chunk(content: string | null, finish: string | null = null) {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }] };
}

const WEATHER_CALL = { id: 'call_1', type: 'function', function: { name: WEATHER_TOOL, arguments: '{"city":"Paris"}' } };

/** Answers the weather tool's call, or the text after its result (whole or streamed); false when the request offers no such tool. */
function weatherAnswer(r: Seen, res: http.ServerResponse): boolean {
  if (!offersWeather(r.json?.tools)) return false;
  const answered = r.json?.messages?.at(-1)?.role === 'tool';
  const { model, stream } = r.json;
  if (stream) {
    const calls = [{ ...chunk(null), choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, ...WEATHER_CALL, function: { name: WEATHER_TOOL, arguments: '' } }] }, finish_reason: null }] }, { ...chunk(null), choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: WEATHER_CALL.function.arguments } }] }, finish_reason: null }] }];
    const body = answered ? [chunk(WEATHER_TEXT)] : calls;
    sendSse(res, [...body, chunk(null, answered ? 'stop' : 'tool_calls'), { ...chunk(null), choices: [], usage: CHAT_USAGE }]);
    return true;
  }
  const message = answered ? { role: 'assistant', content: WEATHER_TEXT } : { role: 'assistant', content: null, tool_calls: [WEATHER_CALL] };
  sendJson(res, 200, { id: 'chatcmpl-t', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }], usage: CHAT_USAGE });
  return true;
}

/**
 * An OpenAI-compatible upstream: chat (whole and streamed, the weather tool), Responses, embeddings;
 * `broken-model` fails, `slow-model` streams slowly.
 */
export function openaiFake() {
  return startFakeUpstream({
    'POST /v1/chat/completions': (r: Seen, res: http.ServerResponse) => {
      const model = r.json?.model;
      if (model === 'broken-model') return sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error' } });
      if (model === 'slow-model') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk('slow '))}\n\n`);
        const timer = setInterval(() => res.write(`data: ${JSON.stringify(chunk('slow '))}\n\n`), 100);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (weatherAnswer(r, res)) return;
      if (r.json?.stream) return sendSse(res, [chunk('Hello'), chunk(' there'), chunk(null, 'stop'), { ...chunk(null), choices: [], usage: CHAT_USAGE }]);
      sendJson(res, 200, { id: 'chatcmpl-w', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: CHAT_USAGE });
    },
    'POST /v1/responses': (r: Seen, res: http.ServerResponse) => {
      if (r.json?.model === 'broken-model') return sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error' } });
      const usage = { input_tokens: 100, output_tokens: 20, total_tokens: 120, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
      sendJson(res, 200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: r.json?.model, output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `echo: ${typeof r.json?.input === 'string' ? r.json.input : 'items'}`, annotations: [] }] }], usage });
    },
    'POST /v1/embeddings': (r: Seen, res: http.ServerResponse) => sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5] }], model: r.json?.model, usage: { prompt_tokens: 7, total_tokens: 7 } }),
  });
}

export interface Stack {
  up: FakeUpstream;
  gateway: GatewayServer;
  edge: EdgeServer;
  close(): Promise<void>;
}

/**
 * A gateway with one OpenAI-compatible channel to a fake upstream and the ratios above, and an edge that
 * reaches its relay in process (`http: true`: over the gateway's internal API with a workload token).
 */
export async function startStack(v: Variant, opts: { http?: boolean; edgeEnv?: Record<string, string>; gatewayEnv?: Record<string, string> } = {}): Promise<Stack> {
  const up = await openaiFake();
  // The gateway console manages the edge through its port, as main.ts wires a co-hosted edge.
  const edgeAdmin: EdgeAdminHolder = { port: null };
  const gateway = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0', ...opts.gatewayEnv }, edgeAdmin });
  const root = await gateway.staff('root', 'root');
  const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'fake', base_url: up.url, models: Object.keys(RATIOS.model_ratio).join(','), key: UPSTREAM_KEY } });
  if (created.status !== 200) throw new Error(created.text);
  await gateway.services.ratios.setCurrent(RATIOS);
  const viaHttp: Record<string, string> = opts.http ? { EDGE_RELAY_URL: gateway.url, EDGE_RELAY_TOKEN_KEY: RELAY_SECRET } : {};
  const edge = await startEdge(v, { relay: opts.http ? undefined : gateway.relay.engine, env: { ...viaHttp, ...opts.edgeEnv } });
  edgeAdmin.port = edge.services.admin;
  return {
    up,
    gateway,
    edge,
    async close() {
      await edge.close();
      await gateway.close();
      await up.close();
    },
  };
}

/** The owner's edge wallet: balance and held amount. */
export async function walletOf(st: Stack, owner: string) {
  const w = await st.edge.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').select(['balance', 'reserved']).where('name', '=', owner).executeTakeFirstOrThrow();
  return { balance: Number(w.balance), reserved: Number(w.reserved) };
}

/** Waits until no sync run of the edge is still open (a stream is settled after its last byte). */
export async function syncRunsSettled(st: Stack) {
  for (let i = 0; i < 100; i++) {
    const open = await st.edge.ctx.db.selectFrom('edge_runs').select('run_id').where('status', 'in', ['reserved', 'running']).where('kind', '=', 'sync').execute();
    if (!open.length) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('a sync run was never settled');
}
