import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import OpenAI, { toFile } from 'openai';
import { Response } from 'undici';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { closeRelayTest, relay, RELAY_ENV, relayToken } from '../helpers/relay.js';
import { variants } from '../helpers/services.js';

/**
 * OpenAI's media endpoints through the relay's internal API (GR14–GR16), the official `openai` SDK as the
 * caller: the upstream gets what the caller sent (the file's bytes unchanged), the caller what the upstream
 * answered (audio byte for byte, in its content type), and the relay log what it cost, worked out here from
 * the prices as the reference bills them. OpenAI-compatible and Azure channels serve these; others are
 * refused before any request. Database-independent: SQLite only.
 */

const KEY = 'sk-media-KEY-0123456789abcdef';
const QUOTA_PER_USD = 500_000;

/** Binary audio with what a careless multipart codec would break: CR LF, dashes, NUL and high bytes. */
const AUDIO = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.from('\r\n--boundary\r\n--\r\n'), Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 131 + 7) % 256))]);
/** What the fake TTS upstream answers: mp3-ish bytes, sent in pieces. */
const SPEECH = Buffer.from(Array.from({ length: 48_000 }, (_, i) => (i * 17 + 3) % 256));

const PRICES = {
  model_price: { 'dall-e-2': 0.02, 'dall-e-3': 0.04, 'whisper-fixed': 0.006 },
  model_ratio: { 'gpt-image-1': 5, 'tts-1': 7.5, 'gpt-4o-mini-tts': 0.3, 'tts-az': 7.5, 'whisper-1': 3, 'gpt-4o-transcribe': 1.25, 'whisper-az': 3, 'claude-draw': 1, 'gpt-4.1': 1 },
  completion_ratio: { 'gpt-image-1': 8, 'gpt-4o-transcribe': 4 },
};
const ratioQuota = (ratio: number, prompt: number, completion = 0, completionRatio = 1) => Math.round((prompt + completion * completionRatio) * ratio);

/** The multipart forms the fake upstreams received, parsed as a server does. */
const forms: { path: string; form: FormData }[] = [];

function upstreamRoutes() {
  const images = (r: Seen, res: http.ServerResponse) => {
    const n = r.json?.n ?? 1;
    const data = Array.from({ length: n }, (_, i) => (r.json?.model === 'gpt-image-1' ? { b64_json: Buffer.from(`png-${i}`).toString('base64') } : { url: `https://img.example/${i}.png`, revised_prompt: r.json?.prompt }));
    const usage = r.json?.model === 'gpt-image-1' ? { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } } : undefined;
    sendJson(res, 200, { created: 1_700_000_000, data, ...(usage ? { usage } : {}) });
  };
  const speech = (_r: Seen, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    const third = Math.ceil(SPEECH.length / 3);
    res.write(SPEECH.subarray(0, third));
    setTimeout(() => {
      res.write(SPEECH.subarray(third, 2 * third));
      setTimeout(() => res.end(SPEECH.subarray(2 * third)), 5);
    }, 5);
  };
  const transcriptions = async (r: Seen, res: http.ServerResponse) => {
    const form = await new Response(r.raw, { headers: { 'content-type': String(r.headers['content-type']) } }).formData();
    forms.push({ path: r.path, form: form as unknown as FormData });
    const text = 'The quick brown fox jumps over the lazy dog.';
    const format = form.get('response_format') ?? 'json';
    if (format === 'text') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(text + '\n');
    if (format === 'srt') return void res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`1\n00:00:00,000 --> 00:00:02,000\n${text}\n`);
    if (format === 'verbose_json') return sendJson(res, 200, { task: 'transcribe', language: 'english', duration: 61.2, text, segments: [], usage: { type: 'duration', seconds: 61.2 } });
    const usage = form.get('model') === 'gpt-4o-transcribe' ? { type: 'tokens', input_tokens: 200, input_token_details: { text_tokens: 0, audio_tokens: 200 }, output_tokens: 30, total_tokens: 230 } : undefined;
    sendJson(res, 200, { text, ...(usage ? { usage } : {}) });
  };
  return {
    'POST /openai/v1/images/generations': images,
    'POST /openai/v1/audio/speech': speech,
    'POST /openai/v1/audio/transcriptions': transcriptions,
    'POST /azure/openai/deployments/dalle3-prod/images/generations': images,
    'POST /azure/openai/deployments/tts-prod/audio/speech': speech,
    'POST /azure/openai/deployments/whisper-prod/audio/transcriptions': transcriptions,
    // Audio that breaks off after its first bytes.
    'POST /cut/v1/audio/speech': (_r: Seen, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(SPEECH.subarray(0, 1000));
      setTimeout(() => res.destroy(), 20);
    },
  };
}

describe('relay media: image generation, speech and transcription through OpenAI and Azure channels (GR14–GR16) [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let client: OpenAI;
  let ids = 0;
  /** A request id for the next call, so its summary can be read back (GR04). */
  const nextId = () => `media-${++ids}`;

  before(async () => {
    up = await startFakeUpstream(upstreamRoutes());
    s = await startGateway(variants()[0]!, { env: { ...RELAY_ENV } });
    const root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent(PRICES);
    const add = async (name: string, type: number, base: string, models: string, fields: Record<string, unknown> = {}) => {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name, base_url: `${up.url}${base}`, models, key: KEY, group: 'default', ...fields } });
      assert.equal(r.status, 200, r.text);
    };
    await add('openai', 1, '/openai', 'dall-e-2,gpt-image-1,tts-1,gpt-4o-mini-tts,whisper-1,gpt-4o-transcribe,whisper-fixed');
    await add('azure', 3, '/azure', 'dall-e-3,tts-az,whisper-az', { model_mapping: JSON.stringify({ 'dall-e-3': 'dalle3-prod', 'tts-az': 'tts-prod', 'whisper-az': 'whisper-prod' }), other: '2024-06-01' });
    await add('anthropic', 14, '/anthropic', 'claude-draw');
    await add('cut', 1, '/cut', 'gpt-4.1');
    // Group 'mixed': three channels that cannot draw, tried first, and one that can.
    for (const n of [1, 2, 3]) await add(`claude-${n}`, 14, '/anthropic', 'dall-e-2', { group: 'mixed', priority: 10 });
    await add('openai-mixed', 1, '/openai', 'dall-e-2', { group: 'mixed', priority: 0 });
    client = new OpenAI({ baseURL: `${s.url}/relay/v1`, apiKey: await relayToken(), maxRetries: 0 });
  });
  after(() => closeRelayTest(s, up, KEY));
  beforeEach(() => {
    up.seen.length = 0;
    forms.length = 0;
  });

  /** The relay's summary of a call (GR04), by the request id it was made with. */
  async function summary(id: string) {
    const res = await fetch(`${s.url}/relay/v1/calls/${id}`, { headers: { authorization: `Bearer ${await relayToken()}` } });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as any;
  }
  const withId = (id: string) => ({ headers: { 'x-request-id': id } });

  test('images: the answer as the upstream gave it; a per-call price paid per image, times DALL·E\'s size ratio', async () => {
    const id = nextId();
    const r = await client.images.generate({ model: 'dall-e-2', prompt: 'a lighthouse at dusk', n: 3, size: '512x512', user: 'u-1' }, withId(id));
    assert.deepEqual(r.data?.map((d) => d.url), ['https://img.example/0.png', 'https://img.example/1.png', 'https://img.example/2.png']);
    const sent = up.to('/openai/v1/images/generations');
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0]!.json, { model: 'dall-e-2', prompt: 'a lighthouse at dusk', n: 3, size: '512x512', user: 'u-1' }, 'the body as the caller sent it');
    assert.equal(sent[0]!.headers.authorization, `Bearer ${KEY}`);
    const sum = await summary(id);
    // 3 images × 0.45 (512×512) × $0.02.
    assert.equal(sum.quota, Math.round(0.02 * 3 * 0.45 * QUOTA_PER_USD));
    assert.equal(sum.status, 200);

    // Token-priced gpt-image-1: the usage it reports (input and output tokens), b64_json passed through.
    const id2 = nextId();
    const g = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red cube', n: 2 }, withId(id2));
    assert.deepEqual(g.data?.map((d) => Buffer.from(d.b64_json!, 'base64').toString()), ['png-0', 'png-1']);
    assert.equal(g.usage?.output_tokens, 4160);
    const s2 = await summary(id2);
    assert.deepEqual([s2.usage.prompt_tokens, s2.usage.completion_tokens, s2.usage.counted], [50, 4160, false]);
    assert.equal(s2.quota, ratioQuota(5, 50, 4160, 8));
  });

  test('images through Azure: the deployment URL with api-version and the api-key header; DALL·E 3 hd wide costs 3 images', async () => {
    const id = nextId();
    const r = await client.images.generate({ model: 'dall-e-3', prompt: 'a map', size: '1792x1024', quality: 'hd' }, withId(id));
    assert.equal(r.data?.length, 1);
    const sent = up.to('/azure/openai/deployments/dalle3-prod/images/generations');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.url.searchParams.get('api-version'), '2024-06-01');
    assert.equal(sent[0]!.headers['api-key'], KEY);
    assert.equal(sent[0]!.json.model, 'dalle3-prod', 'the mapped model');
    // The caller's model name decides the ratios: 1792×1024 is 2, hd at that size 1.5 more.
    assert.equal((await summary(id)).quota, Math.round(0.04 * 3 * QUOTA_PER_USD));
  });

  test('speech: the audio byte for byte in the upstream\'s content type; billed by the input (characters for tts-1, tokens for GPT models)', async () => {
    const input = 'Grüße aus der Küche — ünïcode ✓';
    const id = nextId();
    const res = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, response_format: 'mp3' }, withId(id));
    assert.equal(res.headers.get('content-type'), 'audio/mpeg');
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(SPEECH), 'the audio as the upstream sent it');
    assert.deepEqual(up.to('/openai/v1/audio/speech')[0]!.json, { model: 'tts-1', voice: 'alloy', input, response_format: 'mp3' });
    const sum = await summary(id);
    assert.deepEqual([sum.usage.prompt_tokens, sum.usage.completion_tokens], [[...input].length, 0]);
    assert.equal(sum.quota, ratioQuota(7.5, [...input].length));

    const id2 = nextId();
    const gpt = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'coral', input, instructions: 'cheerful' }, withId(id2));
    assert.ok(Buffer.from(await gpt.arrayBuffer()).equals(SPEECH));
    assert.equal((await summary(id2)).quota, ratioQuota(0.3, countTokens(input)));

    // Azure: the deployment's audio/speech.
    const id3 = nextId();
    const az = await client.audio.speech.create({ model: 'tts-az', voice: 'alloy', input: 'hi' }, withId(id3));
    assert.ok(Buffer.from(await az.arrayBuffer()).equals(SPEECH));
    const sent = up.to('/azure/openai/deployments/tts-prod/audio/speech');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.json.model, 'tts-prod');
    assert.equal(sent[0]!.headers['api-key'], KEY);
    assert.equal((await summary(id3)).quota, ratioQuota(7.5, 2));
  });

  test('speech that breaks off after its first bytes: the caller gets a cut answer, the log says relay_stream_interrupted', async () => {
    const id = nextId();
    const res = await relay(s.url, '/audio/speech', { model: 'gpt-4.1', voice: 'alloy', input: 'hello' }, { headers: { 'x-request-id': id } }).catch((e) => e);
    assert.ok(res instanceof Error || res.summary === null, 'no complete answer with its summary');
    const sum = await summary(id);
    assert.equal(sum.error_code, 'relay_stream_interrupted');
    assert.equal(sum.status, 502);
  });

  test('transcription: the file reaches the upstream byte for byte with the other fields; the answer as the upstream gave it', async () => {
    const id = nextId();
    const t = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'speech.wav', { type: 'audio/wav' }), model: 'gpt-4o-transcribe', language: 'en', temperature: 0.2 }, withId(id));
    assert.equal(t.text, 'The quick brown fox jumps over the lazy dog.');
    assert.equal(forms.length, 1);
    const form = forms[0]!.form;
    const file = form.get('file') as File;
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(AUDIO), 'the file as the caller sent it');
    assert.equal(file.name, 'speech.wav');
    assert.equal(file.type, 'audio/wav');
    assert.deepEqual([form.get('model'), form.get('language'), form.get('temperature')], ['gpt-4o-transcribe', 'en', '0.2']);
    const sum = await summary(id);
    assert.deepEqual([sum.usage.prompt_tokens, sum.usage.completion_tokens, sum.usage.counted], [200, 30, false]);
    assert.equal(sum.quota, ratioQuota(1.25, 200, 30, 4));

    // Text: passed as it came, billed by the text counted.
    const id2 = nextId();
    const text = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'gpt-4o-transcribe', response_format: 'text' }, withId(id2));
    assert.equal(text, 'The quick brown fox jumps over the lazy dog.\n');
    const s2 = await summary(id2);
    const counted = countTokens('The quick brown fox jumps over the lazy dog.\n');
    assert.deepEqual([s2.usage.prompt_tokens, s2.usage.completion_tokens, s2.usage.counted], [0, counted, true]);
    assert.equal(s2.quota, ratioQuota(1.25, 0, counted, 4));

    // whisper-1's verbose_json reports the duration: 1,000 audio tokens a minute, seconds rounded up (62 s).
    const id3 = nextId();
    const v = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] }, withId(id3));
    assert.equal(v.duration, 61.2);
    assert.deepEqual(forms.at(-1)!.form.getAll('timestamp_granularities[]'), ['word', 'segment'], 'a repeated field stays repeated');
    assert.equal((await summary(id3)).quota, ratioQuota(3, Math.round((62 / 60) * 1000)));

    // srt, and a per-call price.
    const id4 = nextId();
    const srt = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-fixed', response_format: 'srt' }, withId(id4));
    assert.match(String(srt), /^1\n00:00:00,000 --> /);
    assert.equal((await summary(id4)).quota, Math.round(0.006 * QUOTA_PER_USD));
  });

  test('transcription through Azure: the deployment URL, the mapped model in the form, the file unchanged', async () => {
    const t = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.mp3', { type: 'audio/mpeg' }), model: 'whisper-az' });
    assert.equal(t.text, 'The quick brown fox jumps over the lazy dog.');
    const sent = up.to('/azure/openai/deployments/whisper-prod/audio/transcriptions');
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.headers['api-key'], KEY);
    assert.equal(sent[0]!.url.searchParams.get('api-version'), '2024-06-01');
    assert.equal(forms[0]!.form.get('model'), 'whisper-prod');
    assert.ok(Buffer.from(await (forms[0]!.form.get('file') as File).arrayBuffer()).equals(AUDIO));
  });

  test('channels that cannot serve the call spend no retry: the one that can still serves it after three that cannot', async () => {
    const mixed = new OpenAI({ baseURL: `${s.url}/relay/v1`, apiKey: await relayToken({ group: 'mixed' }), maxRetries: 0 });
    const id = nextId();
    const r = await mixed.images.generate({ model: 'dall-e-2', prompt: 'a kite', n: 1, size: '256x256' }, withId(id));
    assert.equal(r.data?.length, 1);
    assert.equal(up.to('/openai/v1/images/generations').length, 1);
    assert.equal(up.to('/anthropic/v1/images/generations').length, 0, 'nothing is sent to a channel that cannot draw');
    const sum = await summary(id);
    assert.equal(sum.status, 200);
    assert.equal(sum.attempts.length, 4, JSON.stringify(sum.attempts));
  });

  test('refusals before any upstream request: a model of another family, a streamed image, a form without its file', async () => {
    const other = await relay(s.url, '/images/generations', { model: 'claude-draw', prompt: 'x' });
    assert.equal(other.status, 400, other.text);
    assert.equal(other.json.error.code, 'relay_unsupported_endpoint');
    assert.match(other.json.error.message, /image generation/);
    const stream = await relay(s.url, '/images/generations', { model: 'gpt-image-1', prompt: 'x', stream: true });
    assert.equal(stream.status, 400);
    assert.equal(stream.json.error.code, 'relay_invalid_request');
    const tooMany = await relay(s.url, '/images/generations', { model: 'dall-e-2', prompt: 'x', n: 129 });
    assert.equal(tooMany.status, 400);
    const noFile = new FormData();
    noFile.append('model', 'whisper-1');
    noFile.append('file', 'not a file');
    const res = await fetch(`${s.url}/relay/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${await relayToken()}` }, body: noFile });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.code, 'relay_invalid_request');
    const json = await relay(s.url, '/audio/transcriptions', { model: 'whisper-1', file: 'x' });
    assert.equal(json.status, 400, 'a JSON body holds no file');
    assert.deepEqual(up.seen, [], 'no upstream request');
  });
});
