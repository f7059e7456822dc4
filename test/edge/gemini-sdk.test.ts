import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { generateContentToChat } from '../../src/gateway/relay/formats/gemini/request.js';
import { promptTokens } from '../../src/gateway/relay/tokens.js';
import type { TokenSettings } from '../../src/contract/customer.js';
import { variants } from '../helpers/services.js';
import { CHAT_COST, startStack, syncRunsSettled, UPSTREAM_KEY, walletOf, WEATHER_TEXT, WEATHER_TOOL, type Stack } from '../helpers/stack.js';
import { addVendorChannels, GEMINI_KEY, TEXT, UPSTREAM_TOKEN_COUNT } from '../helpers/vendor-fakes.js';

/**
 * Google's @google/genai SDK (3.x: /v1 by default, /v1beta asked for) against the edge's
 * models/{model}:generateContent, :streamGenerateContent and :countTokens (E09, E10), through a Gemini
 * channel (passed through) and an OpenAI channel (converted), the relay in process and over HTTP: answers,
 * streams, function calls, token counts, errors in Google's shape, each call charged to the unit.
 */

const SETTINGS: TokenSettings = { name: 'gemini', expired_time: -1, remain_quota: 100_000, unlimited_quota: false, model_limits_enabled: true, model_limits: 'gemini', allow_ips: '', group: '' };
const WEATHER = { functionDeclarations: [{ name: WEATHER_TOOL, description: 'The weather of a city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] };
const CHANNELS = [
  ['gemini', 'Gemini', TEXT.gemini],
  ['gemini-via-openai', 'OpenAI', 'Hello there'],
] as const;

for (const link of ['in process', 'over HTTP'] as const) {
  describe(`edge: the Gemini SDK on models/{model}:generateContent, the relay ${link}`, () => {
    let st: Stack;
    let fakes: Awaited<ReturnType<typeof addVendorChannels>>;
    let key: string;
    /** The SDK's default (v1) and v1beta. */
    let clients: [string, GoogleGenAI][];
    const sdk = (apiKey: string, apiVersion?: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: st.edge.url, retryOptions: { attempts: 1 }, ...(apiVersion ? { apiVersion } : {}) } });

    before(async () => {
      st = await startStack(variants()[0]!, { http: link === 'over HTTP' });
      fakes = await addVendorChannels(st);
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '1000000')).error, null);
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'poor', '--amount', '10')).error, null);
      key = await st.edge.issueKey('acme');
      clients = [['v1', sdk(key)], ['v1beta', sdk(key, 'v1beta')]];
    });
    after(async () => {
      const said = st.edge.everything() + st.gateway.everything();
      for (const secret of [UPSTREAM_KEY, GEMINI_KEY, key]) assert.ok(!said.includes(secret), 'a key was logged or answered');
      await st.close();
      await fakes.close();
    });

    /** The wallet loses exactly `calls` calls' cost, nothing stays held, the runs name the public model. */
    async function charged(before: { balance: number }, model: string, calls: number) {
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - calls * CHAT_COST, reserved: 0 });
      const runs = await st.edge.ctx.db.selectFrom('edge_runs').selectAll().where('kind', '=', 'sync').orderBy('created_at', 'desc').limit(calls).execute();
      for (const run of runs) assert.deepEqual([run.status, run.public_model_id, run.format, Number(run.cost)], ['succeeded', model, 'gemini', CHAT_COST]);
    }

    for (const [model, family, text] of CHANNELS) {
      test(`${family} channel: generateContent and its stream under /v1 and /v1beta, billed the relay's cost`, async () => {
        const before = await walletOf(st, 'acme');
        for (const [version, ai] of clients) {
          const r = await ai.models.generateContent({ model, contents: 'hi' });
          assert.equal(r.text, text, version);
          assert.deepEqual([r.usageMetadata?.promptTokenCount, r.usageMetadata?.candidatesTokenCount], [100, 20]);
          let streamed = '';
          let usage = 0;
          for await (const chunk of await ai.models.generateContentStream({ model, contents: 'hi' })) {
            streamed += chunk.text ?? '';
            usage = chunk.usageMetadata?.totalTokenCount ?? usage;
          }
          assert.equal(streamed, text, version);
          assert.equal(usage, 120);
        }
        await charged(before, model, 4);
      });

      test(`${family} channel: a function call and its response`, async () => {
        const before = await walletOf(st, 'acme');
        const [, ai] = clients[0]!;
        const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
        const call = await ai.models.generateContent({ model, contents, config: { tools: [WEATHER] } });
        assert.deepEqual(call.functionCalls?.map((c) => [c.name, c.args]), [[WEATHER_TOOL, { city: 'Paris' }]]);
        let streamedArgs: unknown = null;
        for await (const chunk of await ai.models.generateContentStream({ model, contents, config: { tools: [WEATHER] } })) streamedArgs ??= chunk.functionCalls?.[0]?.args ?? null;
        assert.deepEqual(streamedArgs, { city: 'Paris' });
        const fn = call.functionCalls![0]!;
        const answered = await ai.models.generateContent({
          model,
          config: { tools: [WEATHER] },
          contents: [...contents, { role: 'model', parts: [{ functionCall: fn }] }, { role: 'user', parts: [{ functionResponse: { id: fn.id, name: WEATHER_TOOL, response: { forecast: 'sunny' } } }] }],
        });
        assert.equal(answered.text, WEATHER_TEXT);
        if (family === 'OpenAI') assert.equal(st.up.to('/v1/chat/completions').at(-1)!.json.messages.at(-1).role, 'tool', 'the response reached the upstream as a tool result');
        else assert.ok(JSON.stringify(fakes.gemini.seen.at(-1)!.json.contents.at(-1)).includes('"forecast":"sunny"'));
        await charged(before, model, 3);
      });

      test(`${family} channel: countTokens (${family === 'Gemini' ? "the upstream's own count" : "the tokenizer's estimate"}), never charged`, async () => {
        const before = await walletOf(st, 'acme');
        const contents = [{ role: 'user', parts: [{ text: 'How many tokens is this?' }] }];
        for (const [version, ai] of clients) {
          const counted = await ai.models.countTokens({ model, contents });
          assert.equal(counted.totalTokens, family === 'Gemini' ? UPSTREAM_TOKEN_COUNT : promptTokens(generateContentToChat({ contents }, model, false)), version);
        }
        assert.deepEqual(await walletOf(st, 'acme'), before);
      });
    }

    test("the model list in Gemini's shape under /v1 and /v1beta (x-goog-api-key or ?key=)", async () => {
      for (const [version, client] of clients) {
        const names: string[] = [];
        for await (const m of await client.models.list()) names.push(m.name!);
        for (const [model] of CHANNELS) assert.ok(names.includes(`models/${model}`), `${version}: ${model} is listed`);
      }
      const byQuery = await st.edge.request('GET', `/v1beta/models?key=${encodeURIComponent(key)}`);
      assert.equal(byQuery.status, 200, byQuery.text);
      assert.ok(byQuery.json.models.every((m: { supportedGenerationMethods: string[] }) => m.supportedGenerationMethods.includes('generateContent')));
      const wrong = await st.edge.request('GET', '/v1beta/models', { headers: { 'x-goog-api-key': 'svc_sk_wrong' } });
      assert.deepEqual([wrong.status, wrong.json.error.status], [401, 'UNAUTHENTICATED']);
    });

    test('the key in ?key= works as in x-goog-api-key, and is never logged', async () => {
      const r = await st.edge.request('POST', `/v1beta/models/gemini:generateContent?key=${encodeURIComponent(key)}`, { body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.candidates[0].content.parts[0].text, TEXT.gemini);
      const wrong = await st.edge.request('POST', '/v1/models/gemini:countTokens?key=svc_sk_wrong', { body: { contents: [{ parts: [{ text: 'hi' }] }] } });
      assert.deepEqual([wrong.status, wrong.json.error.status], [401, 'UNAUTHENTICATED']);
      await syncRunsSettled(st);
      assert.ok(!st.edge.log.text().includes(key) && !st.edge.log.text().includes('svc_sk_wrong'), 'the request log leaves the query out');
    });

    test("errors reach the SDK as ApiError in Google's shape: 401, 404, 402, 403, 400", async () => {
      const refusal = async (p: Promise<unknown>, status: number, googleStatus: string, code: string) => {
        const e = await p.then(() => assert.fail('not refused'), (x) => x);
        assert.ok(e instanceof ApiError, String(e));
        assert.equal(e.status, status);
        const body = JSON.parse(e.message);
        assert.deepEqual([body.error.code, body.error.status], [status, googleStatus]);
        assert.equal(typeof body.error.message, 'string');
        assert.ok(!JSON.stringify(body).includes(code), 'the catalog code is in the x-error-code header only');
      };
      const ask = (ai: GoogleGenAI, model = 'gemini') => ai.models.generateContent({ model, contents: 'hi' });
      const before = await walletOf(st, 'acme');
      await refusal(ask(sdk('svc_sk_wrong')), 401, 'UNAUTHENTICATED', 'invalid_api_key');
      await refusal(ask(clients[0]![1], 'no-such-model'), 404, 'NOT_FOUND', 'model_not_found');
      await refusal(ask(sdk(await st.edge.issueKey('poor'), 'v1beta')), 402, 'RESOURCE_EXHAUSTED', 'insufficient_balance');
      const port = st.edge.services.customers;
      const userId = link === 'in process' ? 1 : 2;
      await port.grant(userId, 5_000, `signup:${userId}`, 'system:test', '');
      const limited = await port.createToken(userId, SETTINGS);
      await refusal(ask(sdk(limited.key), 'gemini-via-openai'), 403, 'PERMISSION_DENIED', 'model_not_allowed');
      await refusal(sdk(limited.key).models.countTokens({ model: 'gemini-via-openai', contents: 'hi' }), 403, 'PERMISSION_DENIED', 'model_not_allowed');
      const bad = await st.edge.request('POST', '/v1beta/models/gemini:generateContent', { token: key, body: { contents: [] } });
      assert.deepEqual([bad.status, bad.json.error.status, bad.headers.get('x-error-code')], [400, 'INVALID_ARGUMENT', 'invalid_request_body']);
      const noSse = await st.edge.request('POST', '/v1beta/models/gemini:streamGenerateContent', { token: key, body: { contents: [{ parts: [{ text: 'hi' }] }] } });
      assert.deepEqual([noSse.status, noSse.json.error.status], [400, 'INVALID_ARGUMENT']);
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), before, 'refused calls cost nothing');
      const ok = await sdk(limited.key).models.generateContent({ model: 'gemini', contents: 'hi' });
      assert.equal(ok.text, TEXT.gemini, "the token's own model works");
    });
  });
}
