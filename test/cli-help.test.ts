import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import type { Command } from 'commander';
import { cliProgram } from '../src/cli-program.js';

function* commands(c: Command, path: string[] = []): Generator<{ path: string; command: Command }> {
  yield { path: path.join(' ') || '(cli)', command: c };
  for (const sub of c.commands) yield* commands(sub, [...path, sub.name()]);
}

test('every command, argument and option of the CLI has a description', () => {
  const missing: string[] = [];
  for (const { path, command } of commands(cliProgram())) {
    if (!command.description().trim()) missing.push(`${path}: the command`);
    for (const a of command.registeredArguments) if (!a.description.trim()) missing.push(`${path}: <${a.name()}>`);
    for (const o of command.options) if (!o.description.trim()) missing.push(`${path}: ${o.flags}`);
  }
  assert.deepEqual(missing, []);
});

/** The files that define commands: `cli --help` loads these and commander, nothing else. */
const COMMAND_MODULES = ['src/cli.ts', 'src/cli-program.ts', 'src/account/cli.ts', 'src/account/oauth/cli.ts', 'src/gateway/cli.ts', 'src/gateway/affinity/cli.ts', 'src/edge/cli.ts', 'src/import/cli.ts'];

test('the command modules import only commander, Node built-ins and each other up front', () => {
  const allowed = new Set(COMMAND_MODULES.map((f) => fs.realpathSync(f)));
  const eager: string[] = [];
  for (const file of COMMAND_MODULES) {
    const source = fs.readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^import (?!type )[^;]*? from '([^']+)';$/gms)) {
      const spec = m[1]!;
      if (spec === 'commander' || spec.startsWith('node:')) continue;
      const target = spec.startsWith('.') ? new URL(spec.replace(/\.js$/, '.ts'), `file://${fs.realpathSync(file)}`).pathname : spec;
      if (!allowed.has(target)) eager.push(`${file} imports ${spec} (import it in the action that uses it)`);
    }
  }
  assert.deepEqual(eager, []);
});
