import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../hardening/service-process.js';
import { openaiFake, UPSTREAM_KEY } from '../helpers/stack.js';
import { tempDir } from '../helpers/services.js';

// README's "Serving model calls" run as a newcomer pastes it: the server line in the background, the other shell
// lines in one bash (so an unexported variable or a snippet that prints nothing fails here), the JS block saved
// under the file name on its first line. The CLI runs through npm, as written (npm run -s cli uses dist/).
// What a test needs changed is only the environment (a fresh DATA_DIR, free ports through the documented
// *_PORT variables, loopback allowed) and the text substitutions below, each of which the README must still say.
const README = fs.readFileSync('README.md', 'utf8');

function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has no "## ${title}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

function codeBlocks(markdown: string): { lang: string; code: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** Runs a command without blocking this process, which serves the fake upstream. */
function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const cleanups: (() => void | Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

test('README "Serving model calls": its commands, run as written, answer through the OpenAI, Anthropic and Gemini SDKs and Claude Code, billed to the wallet', { timeout: 420_000 }, async () => {
  const text = section(README, 'Serving model calls');
  assert.match(text, /GATEWAY_UPSTREAM_ALLOW_LIST=/, 'the section says how a loopback upstream (as here) is allowed');
  const blocks = codeBlocks(text);
  const shell = blocks.filter((b) => b.lang === 'sh').map((b) => b.code);
  const js = blocks.filter((b) => b.lang === 'js').map((b) => ({ code: b.code, fileName: /^\/\/ (\S+\.mjs)\n/.exec(b.code)?.[1] }));
  assert.deepEqual(js.map((b) => b.fileName), ['call.mjs', 'anthropic.mjs', 'gemini.mjs'], 'each JS snippet starts with `// <name>.mjs`, the file to save it as');
  const startLines = shell.join('').split('\n').filter((l) => /\bnpm start\b/.test(l));
  assert.equal(startLines.length, 1, 'one line starts the server');

  const up = await openaiFake();
  cleanups.push(() => up.close());
  const ports = { account: await freePort(), gateway: await freePort(), edge: await freePort() };
  const substitutions: [string, string][] = [
    ['https://api.openai.com', up.url], // the channel's upstream: the loopback fake
    ['sk-…', UPSTREAM_KEY],
    ['localhost:3001', `localhost:${ports.gateway}`],
    ['127.0.0.1:3002', `127.0.0.1:${ports.edge}`],
  ];
  const substitute = (text: string) => substitutions.reduce((t, [from, to]) => t.replaceAll(from, to), text);
  for (const [from] of substitutions) assert.ok(shell.some((s) => s.includes(from)) || js.some((b) => b.code.includes(from)), `the README no longer says ${from}`);

  const dataDir = tempDir('readme-serving-');
  fs.mkdirSync(path.join(dataDir, 'home'));
  // Beside the checkout's node_modules, as the README says (the snippet imports `openai`).
  fs.mkdirSync('.tmp', { recursive: true });
  const workDir = fs.mkdtempSync(path.resolve('.tmp', 'readme-serving-'));
  cleanups.push(() => fs.rmSync(workDir, { recursive: true, force: true }));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    ACCOUNT_HOST: '127.0.0.1',
    ACCOUNT_PORT: String(ports.account),
    GATEWAY_PORT: String(ports.gateway),
    EDGE_PORT: String(ports.edge),
    // The fake upstream is on loopback, which the section says needs allowing.
    GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
    // Claude Code offline: its own settings in a fresh directory, no telemetry, updates or other traffic.
    HOME: path.join(dataDir, 'home'),
    CLAUDE_CONFIG_DIR: path.join(dataDir, 'home', '.claude'),
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };

  const server = spawn('bash', ['-c', substitute(startLines[0]!)], { cwd: workDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let serverOutput = '';
  server.stdout!.on('data', (c) => (serverOutput += c));
  server.stderr!.on('data', (c) => (serverOutput += c));
  const exited = new Promise((resolve) => server.once('exit', resolve));
  cleanups.push(async () => {
    if (server.exitCode !== null) return;
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  });
  // The README's signal that the server is ready.
  for (let i = 0; !serverOutput.includes(`edge listening on http://127.0.0.1:${ports.edge}`); i++) {
    assert.ok(i < 600 && server.exitCode === null, `the server did not start: ${serverOutput}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  for (const b of js) fs.writeFileSync(path.join(workDir, b.fileName!), substitute(b.code));
  const script = shell.map((s) => s.split('\n').filter((l) => !startLines.includes(l)).join('\n')).join('\n');
  const pasted = await run('bash', ['-x', '-e', '-o', 'pipefail', '-c', substitute(script)], { cwd: workDir, env });
  const transcript = `stdout:\n${pasted.stdout}\nstderr:\n${pasted.stderr}\nserver:\n${serverOutput}`;
  assert.equal(pasted.status, 0, transcript);
  // The fake answers "Hello there" to every call: printed once by each, the OpenAI snippet's stream included
  // (call.mjs twice, anthropic.mjs, gemini.mjs, Claude Code).
  assert.equal(pasted.stdout.match(/^Hello there$/gm)?.length, 5, transcript);
  const calls = up.to('/v1/chat/completions');
  assert.ok(calls.length >= 5, `${calls.length} upstream calls`);
  assert.equal(calls[0]!.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  assert.ok(calls.some((c) => c.json.tools?.length > 0), "Claude Code's call (with its tools) reached the channel, converted");

  // A stream is settled after its last byte: the wallet shows every call charged once it is.
  let wallet = '';
  for (let i = 0; i < 50 && !new RegExp(`reserved 0,.*settled ${calls.length} run`).test(wallet); i++) {
    wallet = (await run('npm', ['run', '-s', 'cli', '--', 'edge', 'wallet', 'show', '--owner', 'acme'], { cwd: workDir, env })).stdout;
  }
  const [, balance, reserved, charged] = new RegExp(`balance (\\d+), reserved (\\d+),.*settled ${calls.length} run\\(s\\): (\\d+) charged`).exec(wallet) ?? [];
  assert.ok(balance, wallet);
  assert.ok(Number(charged) > 0, wallet);
  const credited = /wallet credit --owner acme --amount (\d+)/.exec(script)?.[1];
  assert.equal(Number(balance), Number(credited) - Number(charged), wallet);
  assert.equal(Number(reserved), 0, wallet);
});
