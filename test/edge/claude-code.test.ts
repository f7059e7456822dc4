import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir, variants } from '../helpers/services.js';
import { CHAT_COST, startStack, syncRunsSettled, walletOf, type Stack } from '../helpers/stack.js';
import { addVendorChannels, TEXT } from '../helpers/vendor-fakes.js';

/**
 * The real Claude Code CLI (a pinned 1.0.x devDependency: one cli.js run by node) pointed at the edge with
 * ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, offline: its HOME is a fresh directory, its telemetry,
 * auto-updater and other non-essential traffic are off, and the only address it is given is the edge's.
 */

const CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json')), 'cli.js');

/** Runs `claude -p <prompt> --output-format json` against the edge; its exit status, output and parsed result. */
function claude(st: Stack, key: string, model: string, home: string): Promise<{ status: number | null; stdout: string; stderr: string; result: any }> {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: st.edge.url,
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_MODEL: model,
    ANTHROPIC_SMALL_FAST_MODEL: model,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, '-p', 'say hi', '--output-format', 'json'], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (status) => {
      let result: any = null;
      try {
        result = JSON.parse(stdout);
      } catch {
        /* the assertion shows the output */
      }
      resolve({ status, stdout, stderr, result });
    });
  });
}

describe('edge: Claude Code (the real CLI) against /v1/messages', () => {
  let st: Stack;
  let fakes: Awaited<ReturnType<typeof addVendorChannels>>;
  let key: string;
  let home: string;

  before(async () => {
    st = await startStack(variants()[0]!);
    fakes = await addVendorChannels(st);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '5000000')).error, null);
    key = await st.edge.issueKey('acme');
    home = tempDir('claude-code-home-');
  });
  after(async () => {
    assert.ok(!st.edge.everything().includes(key), 'the key was logged');
    await st.close();
    await fakes.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  for (const [model, family, text] of [
    ['claude', 'an Anthropic channel', TEXT.anthropic],
    ['claude-via-openai', 'an OpenAI channel (converted)', 'Hello there'],
  ] as const) {
    test(`claude -p "say hi" --output-format json through ${family}: the answer, billed to the unit`, { timeout: 180_000 }, async () => {
      const before = await walletOf(st, 'acme');
      const runsBefore = (await st.edge.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length;
      const r = await claude(st, key, model, home);
      const transcript = `status ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
      assert.equal(r.status, 0, transcript);
      assert.deepEqual([r.result?.type, r.result?.subtype, r.result?.is_error, r.result?.result], ['result', 'success', false, text], transcript);
      assert.deepEqual([r.result.usage.input_tokens, r.result.usage.output_tokens], [100, 20]);

      await syncRunsSettled(st);
      const runs = await st.edge.ctx.db.selectFrom('edge_runs').selectAll().where('kind', '=', 'sync').orderBy('created_at', 'desc').execute();
      const made = runs.slice(0, runs.length - runsBefore);
      assert.ok(made.length >= 1, 'Claude Code called the edge');
      for (const run of made) assert.deepEqual([run.status, run.public_model_id, run.format, Number(run.cost)], ['succeeded', model, 'anthropic', CHAT_COST]);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - made.length * CHAT_COST, reserved: 0 });
      if (model === 'claude') {
        // Claude Code's own request, as the Anthropic channel received it: its ?beta=true, its betas, its system prompt and tools.
        const sent = fakes.anthropic.to('/v1/messages').at(-1)!;
        assert.equal(sent.url.search, '?beta=true');
        assert.match(String(sent.headers['anthropic-beta']), /claude-code-/);
        assert.equal(sent.json.model, 'claude-upstream');
        assert.ok(sent.json.system && sent.json.tools.length > 0);
      }
    });
  }
});
