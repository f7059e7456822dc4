// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import fs from 'node:fs';
import type { Command } from 'commander';
import type { GatewayContext } from '../context.js';
import type { AffinityService, RelayRequest } from './service.js';

type WithAffinity = <T>(fn: (ctx: GatewayContext, affinity: AffinityService) => Promise<T>) => Promise<T>;

function pairs(list: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of list) {
    const eq = p.indexOf('=');
    if (eq < 1) throw new Error(`${flag} takes name=value`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

const collect = (v: string, prev: string[]) => [...prev, v];

interface RequestOptions {
  model: string;
  group: string;
  path?: string;
  userAgent?: string;
  header: string[];
  context: string[];
  body?: string;
}

function relayRequest(o: RequestOptions): RelayRequest {
  let body: unknown;
  if (o.body !== undefined) {
    try {
      body = JSON.parse(o.body);
    } catch {
      throw new Error('--body must be JSON');
    }
  }
  return { model: o.model, group: o.group, path: o.path, userAgent: o.userAgent, headers: pairs(o.header, '--header'), context: pairs(o.context, '--context'), body };
}

function requestOptions(c: Command) {
  return c
    .requiredOption('--model <model>', 'the requested model')
    .requiredOption('--group <group>', 'the using group')
    .option('--path <path>', 'request path, for path_regex')
    .option('--user-agent <ua>', 'the User-Agent header, for user_agent rules')
    .option('--header <name=value>', 'a request header (repeatable)', collect, [])
    .option('--context <name=value>', 'a context value (repeatable)', collect, [])
    .option('--body <json>', 'the request body, for gjson key sources');
}

/**
 * `affinity …`: the settings, and the write path a relay uses (record an entry, add usage), so the cache
 * can be filled from outside the gateway. Entries written here reach a running gateway only through Redis.
 */
export function registerAffinityCommands(program: Command, withAffinity: WithAffinity) {
  const cmd = program.command('affinity').description('channel-affinity cache: settings and the relay write path');
  cmd
    .command('settings')
    .requiredOption('--file <path>', 'JSON settings (channel_affinity_setting), - for standard input')
    .description('validate and store the channel-affinity settings')
    .action(async (o: { file: string }) => {
      const text = o.file === '-' ? fs.readFileSync(0, 'utf8') : fs.readFileSync(o.file, 'utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new Error('the settings are not JSON');
      }
      const { parseSettings } = await import('./settings.js');
      const settings = await readable(() => parseSettings(json));
      await withAffinity((_ctx, affinity) => affinity.saveSettings(settings));
      console.log(`stored: enabled=${settings.enabled}, ${settings.rules.length} rules`);
    });
  cmd.command('show').description('print the settings and the cache statistics (G62)').action(async () => {
    const out = await withAffinity(async (_ctx, a) => ({ settings: await a.settings(), stats: await a.stats() }));
    console.log(JSON.stringify(out, null, 2));
  });
  requestOptions(cmd.command('record').description('record that a request was served by a channel'))
    .requiredOption('--channel <id>', 'the channel that served the request')
    .action(async (o: RequestOptions & { channel: string }) => {
      if (!/^\d+$/.test(o.channel)) throw new Error('--channel must be a channel id');
      const r = await withAffinity((ctx, a) => needsShared(ctx, () => a.record(relayRequest(o), Number(o.channel))));
      console.log(JSON.stringify(r ?? { matched: false }));
    });
  requestOptions(cmd.command('usage').description("add a response's token usage to the counters"))
    .option('--prompt-tokens <n>', 'prompt tokens of the response', '0')
    .option('--completion-tokens <n>', 'completion tokens of the response', '0')
    .option('--cached-tokens <n>', 'cached prompt tokens of the response', '0')
    .action(async (o: RequestOptions & { promptTokens: string; completionTokens: string; cachedTokens: string }) => {
      const n = (v: string, flag: string) => (/^\d+$/.test(v) ? Number(v) : (() => { throw new Error(`${flag} must be a whole number`); })());
      const usage = { prompt_tokens: n(o.promptTokens, '--prompt-tokens'), completion_tokens: n(o.completionTokens, '--completion-tokens'), cached_tokens: n(o.cachedTokens, '--cached-tokens') };
      const r = await withAffinity((ctx, a) => needsShared(ctx, () => a.recordUsage(relayRequest(o), { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens })));
      console.log(JSON.stringify(r ?? { matched: false }));
    });
}

/** An AppError as the operator reads it: its English message, not its code. */
async function readable<T>(fn: () => T): Promise<T> {
  const { AppError, renderMessage } = await import('../../kit/http/errors.js');
  const { errorCatalog } = await import('../../contract/errors/index.js');
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError) throw new Error(renderMessage(errorCatalog[e.code]!, 'en', e.options.params));
    throw e;
  }
}

/** Writes from a CLI process only matter when the cache is shared (Redis); in-process entries would vanish. */
function needsShared<T>(ctx: GatewayContext, fn: () => Promise<T>): Promise<T> {
  if (!ctx.config.redisUrl) throw new Error('the affinity cache is in-process without REDIS_URL: set REDIS_URL to write to the cache the gateways share');
  return fn();
}
