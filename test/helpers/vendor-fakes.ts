import assert from 'node:assert/strict';
import type http from 'node:http';
import { sendJson, startFakeUpstream, type Seen } from './fake-upstream.js';
import { CHAT_USAGE, RATIOS, WEATHER_TEXT, WEATHER_TOOL, type Stack } from './stack.js';

/**
 * Anthropic- and Gemini-format upstreams for the edge's vendor routes, beside the OpenAI one of the stack
 * (stack.ts). Every answer reports the stack's usage (100 prompt and 20 completion tokens), so that each
 * call of a model priced as gpt-4o costs CHAT_COST. A request offering the weather tool gets a call of it
 * unless it holds the tool's result, as the OpenAI one (stack.ts).
 */

export const ANTHROPIC_KEY = 'sk-ant-stack-upstream-KEY-0123456789';
export const GEMINI_KEY = 'AIza-stack-upstream-KEY-0123456789';
/** The upstreams' own token counts (count_tokens, countTokens): what the edge answers for those channels. */
export const UPSTREAM_TOKEN_COUNT = 42;
export const TEXT = { anthropic: 'Hello from Claude', gemini: 'Hello from Gemini', weather: WEATHER_TEXT };

const offersWeather = (tools: unknown) => JSON.stringify(tools ?? []).includes(`"${WEATHER_TOOL}"`);

/** Text cut in two pieces, as a stream sends it. */
const halves = (text: string) => [text.slice(0, 5), text.slice(5)];

// ---- Anthropic ----

type AnthropicBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

function anthropicAnswer(r: Seen): AnthropicBlock[] {
  const last = r.json?.messages?.at(-1);
  const answered = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
  if (offersWeather(r.json?.tools) && !answered) return [{ type: 'tool_use', id: 'toolu_1', name: WEATHER_TOOL, input: { city: 'Paris' } }];
  return [{ type: 'text', text: answered ? TEXT.weather : TEXT.anthropic }];
}

function anthropicStream(res: http.ServerResponse, model: string, blocks: AnthropicBlock[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { id: 'msg_s', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: CHAT_USAGE.prompt_tokens, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const text of halves(b.text)) event('content_block_delta', { index, delta: { type: 'text_delta', text } });
    } else {
      event('content_block_start', { index, content_block: { ...b, input: {} } });
      for (const partial_json of halves(JSON.stringify(b.input))) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    }
    event('content_block_stop', { index });
  });
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: CHAT_USAGE.completion_tokens } });
  event('message_stop', {});
  res.end();
}

/** Anthropic's Messages API: whole and streamed, tool use, count_tokens. */
export function anthropicFake() {
  return startFakeUpstream({
    'POST /v1/messages': (r, res) => {
      const blocks = anthropicAnswer(r);
      if (r.json?.stream) return anthropicStream(res, r.json.model, blocks);
      const stop_reason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
      sendJson(res, 200, { id: 'msg_w', type: 'message', role: 'assistant', model: r.json?.model, content: blocks, stop_reason, stop_sequence: null, usage: { input_tokens: CHAT_USAGE.prompt_tokens, output_tokens: CHAT_USAGE.completion_tokens } });
    },
    'POST /v1/messages/count_tokens': (_r, res) => sendJson(res, 200, { input_tokens: UPSTREAM_TOKEN_COUNT }),
  });
}

// ---- Gemini ----

const GEMINI_USAGE = { promptTokenCount: CHAT_USAGE.prompt_tokens, candidatesTokenCount: CHAT_USAGE.completion_tokens, totalTokenCount: CHAT_USAGE.total_tokens };

function geminiParts(r: Seen): object[] {
  const answered = JSON.stringify(r.json?.contents?.at(-1) ?? {}).includes('"functionResponse"');
  if (offersWeather(r.json?.tools) && !answered) return [{ functionCall: { name: WEATHER_TOOL, args: { city: 'Paris' } } }];
  return [{ text: answered ? TEXT.weather : TEXT.gemini }];
}

/** Gemini's generateContent, streamGenerateContent (alt=sse) and countTokens for the model `gemini-x`. */
export function geminiFake() {
  const candidate = (parts: object[], finishReason?: string) => ({ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) });
  return startFakeUpstream({
    'POST /v1beta/models/gemini-x:generateContent': (r, res) => sendJson(res, 200, { candidates: [candidate(geminiParts(r), 'STOP')], usageMetadata: GEMINI_USAGE, modelVersion: 'gemini-x', responseId: 'resp-w' }),
    'POST /v1beta/models/gemini-x:streamGenerateContent': (r, res) => {
      assert.equal(r.url.searchParams.get('alt'), 'sse');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const parts = geminiParts(r);
      const pieces = 'text' in parts[0]! ? halves(String((parts[0] as { text: string }).text)).map((text) => [{ text }]) : [parts];
      pieces.forEach((p, i) => {
        const last = i === pieces.length - 1;
        res.write(`data: ${JSON.stringify({ candidates: [candidate(p, last ? 'STOP' : undefined)], usageMetadata: last ? GEMINI_USAGE : { promptTokenCount: CHAT_USAGE.prompt_tokens }, responseId: 'resp-s' })}\r\n\r\n`);
      });
      res.end();
    },
    'POST /v1beta/models/gemini-x:countTokens': (_r, res) => sendJson(res, 200, { totalTokens: UPSTREAM_TOKEN_COUNT }),
  });
}

/**
 * Adds an Anthropic channel (gateway model claude-x, sent upstream as claude-upstream) and a Gemini
 * channel (gemini-x) to a stack, priced as gpt-4o, and public models: `claude` and `gemini` on them,
 * `claude-via-openai` and `gemini-via-openai` on the stack's OpenAI channel (gpt-4o, converted).
 */
export async function addVendorChannels(st: Stack) {
  const [anthropic, gemini] = await Promise.all([anthropicFake(), geminiFake()]);
  const root = await st.gateway.staff('vendor-root', 'root');
  for (const channel of [
    { type: 14, name: 'anthropic', base_url: anthropic.url, models: 'claude-x', key: ANTHROPIC_KEY, model_mapping: JSON.stringify({ 'claude-x': 'claude-upstream' }) },
    { type: 24, name: 'gemini', base_url: gemini.url, models: 'gemini-x', key: GEMINI_KEY },
  ]) {
    const created = await root.post('/api/channel/', { mode: 'single', channel });
    assert.equal(created.status, 200, created.text);
  }
  const price = (m: Record<string, number>, model: string) => ({ ...m, 'claude-x': m[model]!, 'gemini-x': m[model]! });
  await st.gateway.services.ratios.setCurrent({ model_ratio: price(RATIOS.model_ratio, 'gpt-4o'), completion_ratio: price(RATIOS.completion_ratio, 'gpt-4o') });
  for (const [id, gatewayModel] of [['claude', 'claude-x'], ['gemini', 'gemini-x'], ['claude-via-openai', 'gpt-4o'], ['gemini-via-openai', 'gpt-4o']]) {
    assert.equal((await st.edge.cli('edge', 'model', 'set', id!, '--reserve', '500', '--gateway-model', gatewayModel!)).error, null);
  }
  return {
    anthropic,
    gemini,
    async close() {
      await anthropic.close();
      await gemini.close();
    },
  };
}
