import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { Response } from 'undici';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { RELAY_ENV, RELAY_SECRET } from '../helpers/relay.js';
import { until, walletOf } from '../helpers/runs.js';
import { variants } from '../helpers/services.js';

/**
 * OpenAI's image generation, speech and transcription endpoints on the edge (E15–E17) with the unchanged
 * `openai` SDK: through the gateway relay in process and apart (over its internal API), to an OpenAI channel
 * and an Azure one; each call reserved and settled in the wallet to the unit, refusals in OpenAI's error
 * shape and never charged.
 */

const KEY = 'sk-edge-media-KEY-0123456789';
const START = 1_000_000;
const UPLOAD_LIMIT = 200_000;
/** Binary audio with CR LF, dashes and every byte value in it. */
const AUDIO = Buffer.concat([Buffer.from('\r\n--x\r\n'), Buffer.from(Array.from({ length: 60_000 }, (_, i) => (i * 131 + 7) % 256))]);
const SPEECH = Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 17 + 3) % 256));
const TEXT = 'The quick brown fox jumps over the lazy dog.';

const PRICES = {
  model_price: { 'dall-e-3': 0.04, 'whisper-az': 0.006, 'claude-draw': 0.01 },
  model_ratio: { 'tts-1': 7.5, 'gpt-4o-transcribe': 1.25 },
  completion_ratio: { 'gpt-4o-transcribe': 4 },
};
/** What each call costs, worked out from the prices as the reference bills them (500,000 units a dollar). */
const COST = {
  twoImages: 2 * 0.04 * 500_000,
  speech: (input: string) => Math.round([...input].length * 7.5),
  transcription: Math.round((200 + 30 * 4) * 1.25),
  azureTranscription: 0.006 * 500_000,
};

function upstreamRoutes(files: Buffer[]) {
  const transcriptions = async (r: Seen, res: http.ServerResponse) => {
    const form = await new Response(r.raw, { headers: { 'content-type': String(r.headers['content-type']) } }).formData();
    files.push(Buffer.from(await (form.get('file') as Blob).arrayBuffer()));
    const usage = form.get('model') === 'gpt-4o-transcribe' ? { type: 'tokens', input_tokens: 200, output_tokens: 30, total_tokens: 230 } : undefined;
    sendJson(res, 200, { text: TEXT, ...(usage ? { usage } : {}) });
  };
  return {
    'POST /openai/v1/images/generations': (r: Seen, res: http.ServerResponse) => sendJson(res, 200, { created: 1, data: Array.from({ length: r.json?.n ?? 1 }, (_, i) => ({ url: `https://img.example/${i}.png` })) }),
    'POST /openai/v1/audio/speech': (_r: Seen, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(SPEECH.subarray(0, 10_000));
      setTimeout(() => res.end(SPEECH.subarray(10_000)), 10);
    },
    'POST /openai/v1/audio/transcriptions': transcriptions,
    'POST /azure/openai/deployments/whisper-prod/audio/transcriptions': transcriptions,
  };
}

for (const apart of [false, true]) {
  describe(`edge: OpenAI's media endpoints with the openai SDK, billed to the unit (E15–E17) [sqlite, relay ${apart ? 'over HTTP' : 'in process'}]`, () => {
    let up: FakeUpstream;
    let gateway: GatewayServer;
    let edge: EdgeServer;
    let client: OpenAI;
    let key: string;
    const files: Buffer[] = [];

    before(async () => {
      up = await startFakeUpstream(upstreamRoutes(files));
      gateway = await startGateway(variants()[0]!, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0' } });
      const root = await gateway.staff('root', 'root');
      const add = async (type: number, base: string, models: string, fields: Record<string, unknown> = {}) => {
        const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name: base.slice(1), base_url: up.url + base, models, key: KEY, group: 'default', ...fields } });
        assert.equal(r.status, 200, r.text);
      };
      await add(1, '/openai', 'dall-e-3,tts-1,gpt-4o-transcribe');
      await add(3, '/azure', 'whisper-az', { model_mapping: JSON.stringify({ 'whisper-az': 'whisper-prod' }) });
      await add(14, '/anthropic', 'claude-draw');
      await gateway.services.ratios.setCurrent(PRICES);
      const relayEnv: Record<string, string> = apart ? { EDGE_RELAY_URL: gateway.url, EDGE_RELAY_TOKEN_KEY: RELAY_SECRET } : {};
      edge = await startEdge(variants()[0]!, { relay: apart ? undefined : gateway.relay.engine, env: { ...relayEnv, EDGE_MAX_UPLOAD_BYTES: String(UPLOAD_LIMIT) } });
      for (const model of ['dall-e-3', 'tts-1', 'gpt-4o-transcribe', 'whisper-az', 'claude-draw']) assert.equal((await edge.cli('edge', 'model', 'set', model, '--reserve', '100')).error, null);
      assert.equal((await edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', String(START))).error, null);
      key = await edge.issueKey('acme');
      client = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      assert.ok(!edge.everything().includes(KEY) && !gateway.everything().includes(KEY), 'the upstream key left the gateway');
      await edge?.close();
      await gateway?.close();
      await up?.close();
    });

    /** The wallet once every call is settled (nothing reserved any more). */
    async function settledWallet() {
      await until('every call settled', async () => (await walletOf(edge, 'acme')).reserved === 0);
      return (await walletOf(edge, 'acme')).balance;
    }
    /** The newest sync run's status and cost. */
    async function lastRun() {
      const run = await edge.ctx.db.selectFrom('edge_runs').select(['status', 'cost', 'format']).where('kind', '=', 'sync').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
      return { status: run.status, cost: Number(run.cost), format: run.format };
    }

    test('images: data[].url as the upstream answered; the per-call price paid per image', async () => {
      const before = await settledWallet();
      const r = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2 });
      assert.deepEqual(r.data?.map((d) => d.url), ['https://img.example/0.png', 'https://img.example/1.png']);
      assert.equal(await settledWallet(), before - COST.twoImages);
      assert.deepEqual(await lastRun(), { status: 'succeeded', cost: COST.twoImages, format: 'images' });
    });

    test('speech: the audio byte for byte in audio/mpeg; billed by the input\'s characters', async () => {
      const before = await settledWallet();
      const input = 'Grüße — hello ✓';
      const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input });
      assert.equal(res.headers.get('content-type'), 'audio/mpeg');
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(SPEECH), 'the upstream\'s bytes');
      assert.equal(await settledWallet(), before - COST.speech(input));
      assert.deepEqual(await lastRun(), { status: 'succeeded', cost: COST.speech(input), format: 'speech' });
    });

    test('transcription: the file\'s bytes reach the upstream unchanged, through OpenAI and Azure; billed by the reported usage or the price', async () => {
      files.length = 0;
      const before = await settledWallet();
      const t = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'talk.wav', { type: 'audio/wav' }), model: 'gpt-4o-transcribe' });
      assert.equal(t.text, TEXT);
      assert.equal(files.length, 1);
      assert.ok(files[0]!.equals(AUDIO), 'the upstream got the caller\'s bytes');
      assert.equal(await settledWallet(), before - COST.transcription);

      const az = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'talk.mp3'), model: 'whisper-az', response_format: 'json' });
      assert.equal(az.text, TEXT);
      assert.equal(up.to('/azure/openai/deployments/whisper-prod/audio/transcriptions').length, 1);
      assert.ok(files[1]!.equals(AUDIO));
      assert.equal(await settledWallet(), before - COST.transcription - COST.azureTranscription);
      // Apart, the summaries came with the answers (a trailer after the bytes), not from the gateway's log.
      assert.ok(!gateway.log.text().includes('/relay/v1/calls/'), 'no call summary was asked for (GR04)');
    });

    test('refusals in OpenAI\'s shape, never charged: an unknown model, a model of another family, a file over the limit', async () => {
      const before = await settledWallet();
      const seen = up.seen.length;
      await assert.rejects(client.images.generate({ model: 'no-such-model', prompt: 'x' }), (e: any) => e.status === 404 && e.code === 'model_not_found' && e.type === 'invalid_request_error');
      await assert.rejects(client.images.generate({ model: 'claude-draw', prompt: 'x' }), (e: any) => e.status === 400 && e.code === 'relay_unsupported_endpoint' && /image generation/.test(e.message));
      await assert.rejects(
        client.audio.transcriptions.create({ file: await toFile(Buffer.alloc(UPLOAD_LIMIT + 1, 1), 'big.wav'), model: 'gpt-4o-transcribe' }),
        (e: any) => e.status === 413 && e.code === 'request_too_large' && e.type === 'invalid_request_error',
      );
      // A JSON body cannot carry the file.
      const json = await edge.request('POST', '/v1/audio/transcriptions', { token: key, body: { model: 'gpt-4o-transcribe', file: 'talk.wav' } });
      assert.equal(json.status, 400, json.text);
      assert.equal(json.json.error.code, 'invalid_request_body');
      const broken = await edge.request('POST', '/v1/audio/transcriptions', { token: key, raw: '--x\r\nnot a form', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
      assert.equal(broken.status, 400, broken.text);
      // Only the routes that take a file read a form.
      const form = new FormData();
      form.append('model', 'dall-e-3');
      const chat = await fetch(`${edge.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      assert.equal(chat.status, 415);
      assert.equal(((await chat.json()) as any).error.code, 'unsupported_media_type');
      assert.equal(await settledWallet(), before);
      assert.equal(up.seen.length, seen, 'no upstream request');
    });
  });
}
