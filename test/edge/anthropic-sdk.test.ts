import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { customerOwnerName, type TokenSettings } from '../../src/contract/customer.js';
import { messagesToChat } from '../../src/gateway/relay/formats/anthropic/request.js';
import { promptTokens } from '../../src/gateway/relay/tokens.js';
import { variants } from '../helpers/services.js';
import { CHAT_COST, startStack, syncRunsSettled, UPSTREAM_KEY, walletOf, WEATHER_TEXT, WEATHER_TOOL, type Stack } from '../helpers/stack.js';
import { addVendorChannels, ANTHROPIC_KEY, TEXT, UPSTREAM_TOKEN_COUNT } from '../helpers/vendor-fakes.js';

/**
 * The official Anthropic SDK against the edge's POST /v1/messages and /v1/messages/count_tokens (E07, E08),
 * through an Anthropic channel (passed through) and an OpenAI channel (converted), the gateway's relay in
 * process and over its internal API (a separately deployed edge): answers, streams, tools, system prompts,
 * token counts, errors as the SDK's classes, each call charged to the unit.
 */

const SETTINGS: TokenSettings = { name: 'claude', expired_time: -1, remain_quota: 100_000, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };
const WEATHER = { name: WEATHER_TOOL, description: 'The weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
/** Each public model, and what its channel answers to a plain question. */
const CHANNELS = [
  ['claude', 'Anthropic', TEXT.anthropic],
  ['claude-via-openai', 'OpenAI', 'Hello there'],
] as const;

for (const link of ['in process', 'over HTTP'] as const) {
  describe(`edge: the Anthropic SDK on /v1/messages, the relay ${link}`, () => {
    let st: Stack;
    let fakes: Awaited<ReturnType<typeof addVendorChannels>>;
    let key: string;
    let client: Anthropic;
    const START = 1_000_000;

    before(async () => {
      st = await startStack(variants()[0]!, { http: link === 'over HTTP' });
      fakes = await addVendorChannels(st);
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', String(START))).error, null);
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'poor', '--amount', '10')).error, null);
      key = await st.edge.issueKey('acme');
      client = new Anthropic({ baseURL: st.edge.url, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      const said = st.edge.everything() + st.gateway.everything();
      for (const secret of [UPSTREAM_KEY, ANTHROPIC_KEY, key]) assert.ok(!said.includes(secret), 'a key was logged or answered');
      await st.close();
      await fakes.close();
    });

    /** The wallet loses exactly one call's cost, nothing stays held, and the run names the public model. */
    async function charged(before: { balance: number }, model: string, calls = 1) {
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - calls * CHAT_COST, reserved: 0 });
      const runs = await st.edge.ctx.db.selectFrom('edge_runs').selectAll().where('kind', '=', 'sync').orderBy('created_at', 'desc').limit(calls).execute();
      for (const run of runs) assert.deepEqual([run.status, run.public_model_id, run.format, Number(run.cost)], ['succeeded', model, 'anthropic', CHAT_COST]);
    }

    for (const [model, family, text] of CHANNELS) {
      test(`${family} channel: a whole message and a stream, billed the relay's cost`, async () => {
        const before = await walletOf(st, 'acme');
        const m = await client.messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(m.type, 'message');
        assert.deepEqual(m.content, [{ type: 'text', text }]);
        assert.equal(m.stop_reason, 'end_turn');
        assert.deepEqual([m.usage.input_tokens, m.usage.output_tokens], [100, 20]);
        const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] });
        let streamed = '';
        stream.on('text', (t) => (streamed += t));
        const final = await stream.finalMessage();
        assert.equal(streamed, text);
        assert.equal(final.usage.output_tokens, 20);
        await charged(before, model, 2);
      });

      test(`${family} channel: a tool call and its result, whole and streamed`, async () => {
        const before = await walletOf(st, 'acme');
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
        const call = await client.messages.create({ model, max_tokens: 256, tools: [WEATHER], messages });
        assert.equal(call.stop_reason, 'tool_use');
        const use = call.content.find((b) => b.type === 'tool_use');
        assert.ok(use && use.type === 'tool_use');
        assert.deepEqual([use.name, use.input], [WEATHER_TOOL, { city: 'Paris' }]);
        const streamedCall = await client.messages.stream({ model, max_tokens: 256, tools: [WEATHER], messages }).finalMessage();
        assert.deepEqual(streamedCall.content.filter((b) => b.type === 'tool_use').map((b) => b.type === 'tool_use' && b.input), [{ city: 'Paris' }]);
        const answered = await client.messages.create({
          model,
          max_tokens: 256,
          tools: [WEATHER],
          messages: [...messages, { role: 'assistant', content: call.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 24°C' }] }],
        });
        assert.deepEqual(answered.content, [{ type: 'text', text: WEATHER_TEXT }]);
        const sent = family === 'Anthropic' ? fakes.anthropic.to('/v1/messages').at(-1)!.json.messages.at(-1).content[0] : st.up.to('/v1/chat/completions').at(-1)!.json.messages.at(-1);
        assert.equal(sent.content, 'sunny, 24°C', 'the tool result reached the upstream');
        await charged(before, model, 3);
      });

      test(`${family} channel: system, also as a role "system" message (Claude Code), reaches the upstream as its system prompt`, async () => {
        const messages = [{ role: 'system', content: 'Answer in French.' }, { role: 'user', content: 'hi' }] as unknown as Anthropic.MessageParam[];
        const m = await client.messages.create({ model, max_tokens: 64, system: [{ type: 'text', text: 'You are terse.' }], messages });
        assert.equal(m.content[0]!.type, 'text');
        if (family === 'Anthropic') {
          const sent = fakes.anthropic.to('/v1/messages').at(-1)!.json;
          assert.deepEqual(sent.system, [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in French.' }]);
          assert.deepEqual(sent.messages, [{ role: 'user', content: 'hi' }]);
        } else {
          assert.deepEqual(st.up.to('/v1/chat/completions').at(-1)!.json.messages[0], { role: 'system', content: 'You are terse.\n\nAnswer in French.' });
        }
      });

      test(`${family} channel: count_tokens (${family === 'Anthropic' ? "the upstream's own count" : 'the tokenizer\'s estimate'}), never charged`, async () => {
        const before = await walletOf(st, 'acme');
        const runs = (await st.edge.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length;
        const body = { model, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
        const counted = await client.messages.countTokens(body);
        assert.equal(counted.input_tokens, family === 'Anthropic' ? UPSTREAM_TOKEN_COUNT : promptTokens(messagesToChat(body)));
        assert.deepEqual(await walletOf(st, 'acme'), before);
        assert.equal((await st.edge.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length, runs, 'no run');
      });
    }

    test("the model list and a model in Anthropic's shape (anthropic-version, with x-api-key or a bearer)", async () => {
      const ids: string[] = [];
      for await (const m of client.models.list()) {
        assert.deepEqual([m.type, m.display_name, Number.isNaN(Date.parse(m.created_at))], ['model', m.id, false]);
        ids.push(m.id);
      }
      for (const [model] of CHANNELS) assert.ok(ids.includes(model), `${model} is listed`);
      const one = await client.models.retrieve(CHANNELS[0][0]);
      assert.deepEqual([one.type, one.id], ['model', CHANNELS[0][0]]);
      const unknown = await client.models.retrieve('no-such-model').catch((e) => e);
      assert.ok(unknown instanceof Anthropic.NotFoundError, String(unknown));
      const byHeader = await st.edge.request('GET', '/v1/models', { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
      assert.deepEqual([byHeader.status, byHeader.json.first_id, byHeader.json.has_more], [200, ids[0], false], byHeader.text);
      // Without anthropic-version, the same key answers OpenAI's list.
      const plain = await st.edge.request('GET', '/v1/models', { headers: { 'x-api-key': key } });
      assert.deepEqual([plain.status, plain.json.object], [200, 'list'], plain.text);
    });

    test("Claude Code's way: ?beta=true, Authorization: Bearer, anthropic-version and anthropic-beta passed to the Anthropic channel", async () => {
      const bearer = new Anthropic({ baseURL: st.edge.url, authToken: key, apiKey: null, maxRetries: 0, defaultHeaders: { 'anthropic-version': '2024-10-22' } });
      // This SDK's beta namespace sends no ?beta=true of its own; Claude Code's does (claude-code.test.ts).
      const m = await bearer.beta.messages.create({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], betas: ['claude-code-20250219'] }, { query: { beta: 'true' } });
      assert.deepEqual(m.content, [{ type: 'text', text: TEXT.anthropic }]);
      const sent = fakes.anthropic.to('/v1/messages').at(-1)!;
      assert.deepEqual([sent.headers['anthropic-beta'], sent.headers['anthropic-version'], sent.headers['x-api-key'], sent.url.search], ['claude-code-20250219', '2024-10-22', ANTHROPIC_KEY, '?beta=true']);
      assert.equal(sent.json.model, 'claude-upstream', 'the gateway model, mapped by the channel');
    });

    test('?beta=true reaches the Anthropic channel (whole, streamed, count_tokens), as new-api sends it; no other value, no converted call', async () => {
      const ask = { model: 'claude', max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] };
      const beta = { query: { beta: 'true' } };
      const lastQuery = (path: string) => fakes.anthropic.to(path).at(-1)!.url.search;
      await client.messages.create(ask, beta);
      assert.equal(lastQuery('/v1/messages'), '?beta=true');
      await client.messages.stream(ask, beta).finalMessage();
      assert.equal(lastQuery('/v1/messages'), '?beta=true');
      await client.messages.countTokens({ model: 'claude', messages: ask.messages }, beta);
      assert.equal(lastQuery('/v1/messages/count_tokens'), '?beta=true');
      await client.messages.create(ask);
      assert.equal(lastQuery('/v1/messages'), '', 'no query when the caller sent none');
      await client.messages.countTokens({ model: 'claude', messages: ask.messages });
      assert.equal(lastQuery('/v1/messages/count_tokens'), '');
      for (const query of ['beta=false', 'beta=1', 'beta=TRUE', 'beta=', 'other=true', 'beta=false&beta=true']) {
        const r = await st.edge.request('POST', `/v1/messages?${query}`, { headers: { 'x-api-key': key }, body: ask });
        assert.equal(r.status, 200, r.text);
        assert.equal(lastQuery('/v1/messages'), '', `?${query} is not passed on`);
      }
      const before = st.up.to('/v1/chat/completions').length;
      await client.messages.create({ ...ask, model: 'claude-via-openai' }, beta);
      const converted = st.up.to('/v1/chat/completions');
      assert.equal(converted.length, before + 1);
      assert.equal(converted.at(-1)!.url.search, '', 'a converted call drops it');
      await syncRunsSettled(st);
    });

    test("errors reach the SDK as its classes, in Anthropic's shape: 401, 404, 402, 400", async () => {
      const call = (c: Anthropic, model = 'claude', extra: object = {}) => c.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra });
      const expect = async (p: Promise<unknown>, cls: abstract new (...args: never[]) => InstanceType<typeof Anthropic.APIError>, status: number, type: string, code: string) => {
        const e = await p.then(() => assert.fail('not refused'), (x) => x);
        assert.ok(e instanceof cls, `${status}: ${e}`);
        assert.deepEqual([e.status, e.type, e.headers?.get('x-error-code')], [status, type, code]);
        assert.ok(e.requestID, 'the request id is in request-id');
        assert.equal((e.error as { type?: string }).type, 'error');
      };
      const before = await walletOf(st, 'acme');
      await expect(call(new Anthropic({ baseURL: st.edge.url, apiKey: 'svc_sk_wrong', maxRetries: 0 })), Anthropic.AuthenticationError, 401, 'authentication_error', 'invalid_api_key');
      // Without a key (the SDK refuses to send none): the same shape.
      const bare = await st.edge.request('POST', '/v1/messages?beta=true', { body: { model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });
      assert.deepEqual([bare.status, bare.json.type, bare.json.error.type, bare.headers.get('x-error-code')], [401, 'error', 'authentication_error', 'missing_api_key']);
      await expect(call(client, 'no-such-model'), Anthropic.NotFoundError, 404, 'not_found_error', 'model_not_found');
      await expect(client.messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }), Anthropic.NotFoundError, 404, 'not_found_error', 'model_not_found');
      const poor = new Anthropic({ baseURL: st.edge.url, apiKey: await st.edge.issueKey('poor'), maxRetries: 0 });
      await expect(call(poor), Anthropic.PaymentRequiredError, 402, 'billing_error', 'insufficient_balance');
      await expect(call(client, 'claude', { messages: [] }), Anthropic.BadRequestError, 400, 'invalid_request_error', 'invalid_request_body');
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), before, 'refused calls cost nothing');
    });

    test("an account user's token on /v1/messages: model limits (403), disabled (401), empty wallet (402); usage logged under the public model", async () => {
      const port = st.edge.services.customers;
      const userId = link === 'in process' ? 1 : 2;
      await port.grant(userId, 5_000, `signup:${userId}`, 'system:test', '');
      const limited = await port.createToken(userId, { ...SETTINGS, model_limits_enabled: true, model_limits: 'claude' });
      const user = new Anthropic({ baseURL: st.edge.url, apiKey: limited.key, maxRetries: 0 });
      const m = await user.messages.create({ model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(m.content[0]!.type, 'text');
      const refused = await user.messages.create({ model: 'claude-via-openai', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      assert.ok(refused instanceof Anthropic.PermissionDeniedError);
      assert.equal(refused.type, 'permission_error');
      const counted = await user.messages.countTokens({ model: 'claude-via-openai', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      assert.ok(counted instanceof Anthropic.PermissionDeniedError, 'counting is held to the same model limits');
      await syncRunsSettled(st);
      const logs = await port.logs({ userId, type: 2, page: 1, size: 10 });
      assert.deepEqual(logs.items.map((l) => [l.model_name, l.quota, l.token_name]), [['claude', CHAT_COST, 'claude']]);
      const usage = await st.edge.cli('edge', 'usage', '--owner', customerOwnerName(userId));
      assert.match(usage.lines.join('\n'), /\tclaude\t1\t0\t100\t20\t320$/m);

      await port.setTokenStatus(userId, limited.token.id, 2);
      assert.ok((await user.messages.create({ model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)) instanceof Anthropic.AuthenticationError);
      const broke = 1000 + userId;
      const empty = await port.createToken(broke, { ...SETTINGS, unlimited_quota: true });
      const e = await new Anthropic({ baseURL: st.edge.url, apiKey: empty.key, maxRetries: 0 }).messages.create({ model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((x) => x);
      assert.ok(e instanceof Anthropic.PaymentRequiredError, String(e));
      assert.equal(e.type, 'billing_error');
    });
  });
}
