// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import type { createGatewayContext } from './app.js';
import type { GatewayDB } from './db.js';
import { registerAffinityCommands } from './affinity/cli.js';

type Boot = () => { config: Config; runtime: Runtime } | Promise<{ config: Config; runtime: Runtime }>;
type Gateway = Awaited<ReturnType<typeof createGatewayContext>>;

/** Who a CLI action is audited as: actor id 0, named after the operating-system user who ran it. */
async function cliActor(): Promise<{ id: number; name: string }> {
  const { cliActorName } = await import('../kit/cli/actor.js');
  return { id: 0, name: cliActorName() };
}

/** Audits a CLI action (operation `cli:…`, as cliActor()). Never a token, secret or key in `detail`. */
async function cliAudit(db: Kysely<GatewayDB>, operation: string, detail: Record<string, unknown>) {
  const { audit } = await import('./audit/store.js');
  return audit(db, await cliActor(), operation, null, detail);
}

/** Opens the gateway database, runs `fn`, and always closes it again. */
async function withGateway<T>(boot: Boot, fn: (g: Gateway) => Promise<T>): Promise<T> {
  const { config, runtime } = await boot();
  const { createGatewayContext } = await import('./app.js');
  const g = await createGatewayContext(config, runtime);
  try {
    return await fn(g);
  } finally {
    await g.ctx.upstream.close();
    await g.ctx.database.close();
    await runtime.close();
  }
}

function role(v: string): 'root' | 'admin' {
  if (v !== 'root' && v !== 'admin') throw new Error('--role must be root or admin');
  return v;
}

/** A positive integer option (digits only: no sign, fraction, exponent or hex). */
function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`);
  return n;
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

const isoTime = (s: number | null) => (s === null ? 'never' : new Date(Number(s) * 1000).toISOString());

/** Gateway commands (staff, tokens, services, key re-encryption, audit). Secrets are the last stdout line. */
export function registerGatewayCommands(program: Command, boot: Boot) {
  const staff = program.command('staff').description('manage gateway staff identities');
  staff
    .command('create')
    .description('create a staff member')
    .requiredOption('--name <name>', 'staff name (unique)')
    .requiredOption('--role <role>', 'root or admin')
    .action(async (o: { name: string; role: string }) => {
      const id = await withGateway(boot, async (g) => {
        const created = await g.services.staff.create(o.name, role(o.role));
        await cliAudit(g.ctx.db, 'cli:staff', { name: o.name, role: o.role, id: created });
        return created;
      });
      console.log(`staff ${o.name} created (id ${id}, role ${o.role})`);
    });
  for (const effect of ['grant', 'deny'] as const) {
    staff
      .command(effect)
      .description(effect === 'grant' ? 'grant a staff member a permission beyond their role' : 'deny a staff member a permission of their role')
      .requiredOption('--name <name>', 'the staff member')
      .requiredOption('--permission <permission>', 'an authz.* permission')
      .action(async (o: { name: string; permission: string }) => {
        await withGateway(boot, async (g) => {
          await g.services.staff.setPermission(o.name, o.permission, effect);
          await cliAudit(g.ctx.db, `cli:${effect}`, { name: o.name, permission: o.permission });
        });
        console.log(`${effect === 'grant' ? 'granted' : 'denied'} ${o.permission} ${effect === 'grant' ? 'to' : 'for'} ${o.name}`);
      });
  }
  staff
    .command('totp')
    .requiredOption('--name <name>', 'the staff member')
    .description('enroll TOTP for a staff member; prints the base32 secret last')
    .action(async (o: { name: string }) => {
      const r = await withGateway(boot, async (g) => {
        const enrolled = await g.services.staff.enrollTotp(o.name);
        await cliAudit(g.ctx.db, 'cli:totp', { name: o.name });
        return enrolled;
      });
      console.log(r.uri);
      console.log(r.secret);
    });
  for (const state of ['disable', 'enable'] as const) {
    staff
      .command(state)
      .requiredOption('--name <name>', 'the staff or service identity')
      .description(state === 'disable' ? 'stop every token of a staff or service identity (kept, not revoked)' : 'let a disabled identity authenticate again')
      .action(async (o: { name: string }) => {
        await withGateway(boot, async (g) => {
          await g.services.staff.setDisabled(o.name, state === 'disable');
          await cliAudit(g.ctx.db, `cli:${state}`, { name: o.name });
        });
        console.log(`${o.name} ${state}d`);
      });
  }
  staff.command('list').description('every staff and service identity: id, name, kind, role, state').action(async () => {
    const rows = await withGateway(boot, (g) => g.services.staff.list());
    for (const r of rows) console.log(`${r.id}\t${r.name}\t${r.kind}\t${r.role}\t${r.disabled_at === null ? 'enabled' : 'disabled'}`);
  });

  const token = program.command('token').description('gateway bearer tokens');
  token
    .command('create')
    .description('issue a bearer token for a staff or service identity (printed once, on the last line)')
    .requiredOption('--staff <name>', 'the staff or service identity')
    .option('--ttl <seconds>', 'expire after this many seconds')
    .action(async (o: { staff: string; ttl?: string }) => {
      const ttl = o.ttl === undefined ? undefined : Number(o.ttl);
      if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1)) throw new Error('--ttl must be a positive integer');
      const r = await withGateway(boot, async (g) => {
        const issued = await g.services.staff.issueToken(o.staff, ttl);
        await cliAudit(g.ctx.db, 'cli:token', { name: o.staff, expires_at: issued.expiresAt });
        return issued;
      });
      console.log(r.token);
    });
  token
    .command('list')
    .requiredOption('--staff <name>', 'a staff or service identity')
    .description('live tokens: id, created, expires (never the token)')
    .action(async (o: { staff: string }) => {
      const rows = await withGateway(boot, (g) => g.services.staff.tokensOf(o.staff));
      for (const r of rows) console.log(`${r.id}\t${isoTime(r.created_at)}\t${isoTime(r.expires_at)}`);
    });
  token
    .command('revoke')
    .description('revoke one token (--token or --id) or every token of an identity (--staff)')
    .option('--token <token>', 'the token itself, or - to read it from standard input (kept out of argv and shell history)')
    .option('--id <id>', 'a token id from token list')
    .option('--staff <name>', 'every token of this identity')
    .action(async (o: { token?: string; id?: string; staff?: string }) => {
      const given = [o.token, o.id, o.staff].filter((v) => v !== undefined).length;
      if (given !== 1) throw new Error('give exactly one of --token, --id, --staff');
      if (o.staff !== undefined) {
        const n = await withGateway(boot, async (g) => {
          const revoked = await g.services.staff.revokeTokensOf(o.staff!);
          await cliAudit(g.ctx.db, 'cli:revoke', { name: o.staff, count: revoked });
          return revoked;
        });
        console.log(`revoked ${n} token${n === 1 ? '' : 's'} of ${o.staff}`);
        return;
      }
      const id = o.id === undefined ? undefined : positiveInt('--id', o.id);
      if (o.token === '-') o.token = (await readStdin()).trim();
      const done = await withGateway(boot, async (g) => {
        const revoked = id === undefined ? await g.services.staff.revokeToken(o.token!) : await g.services.staff.revokeTokenById(id);
        // By token: which token is not recorded (its text is the secret).
        if (revoked) await cliAudit(g.ctx.db, 'cli:revoke', id === undefined ? { by: 'token' } : { token_id: id });
        return revoked;
      });
      if (!done) throw new Error('no active token matches');
      console.log('token revoked');
    });

  program
    .command('service')
    .description('gateway service identities')
    .command('create')
    .description('create a service identity with these permissions; prints its token last')
    .requiredOption('--name <name>', 'service name (unique)')
    .requiredOption('--permission <list>', 'comma list of authz.* permissions')
    .action(async (o: { name: string; permission: string }) => {
      const perms = o.permission.split(',').map((p) => p.trim()).filter(Boolean);
      const r = await withGateway(boot, async (g) => {
        await g.services.staff.create(o.name, 'service', perms);
        const issued = await g.services.staff.issueToken(o.name);
        await cliAudit(g.ctx.db, 'cli:service', { name: o.name, permissions: perms });
        return issued;
      });
      console.log(r.token);
    });

  program
    .command('audit')
    .description('print the gateway audit log (newest first)')
    .option('--limit <n>', 'rows (at most 10000)', '50')
    .option('--channel <id>', 'only this channel')
    .action(async (o: { limit: string; channel?: string }) => {
      const limit = Math.min(10000, positiveInt('--limit', o.limit));
      const channelId = o.channel === undefined ? undefined : positiveInt('--channel', o.channel);
      const { readAudit } = await import('./audit/store.js');
      const rows = await withGateway(boot, (g) => readAudit(g.ctx.db, { limit, channelId }));
      for (const r of rows) console.log(JSON.stringify({ ...r, detail: JSON.parse(r.detail) }));
    });

  program
    .command('gateway-rekey')
    .description('re-encrypt channel keys and TOTP secrets under a new key (prints the new key last)')
    .option('--new-key <hex>', '64 hex characters; generated when omitted')
    .action(async (o: { newKey?: string }) => {
      const hex = o.newKey ?? crypto.randomBytes(32).toString('hex');
      if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('--new-key must be 64 hex characters');
      const next = Buffer.from(hex, 'hex');
      const { open, seal } = await import('../kit/crypto/aead.js');
      const { commitSecretKeyFile, stageSecretKeyFile } = await import('./context.js');
      const { storeFingerprint } = await import('./sealing.js');
      const n = await withGateway(boot, async (g) => {
        const old = g.ctx.secretKey;
        const fileKey = !g.ctx.config.gateway.secretKey;
        if (fileKey) stageSecretKeyFile(g.ctx.config, hex);
        const count = await g.ctx.db.transaction().execute(async (trx) => {
          // First, so running gateways refuse to seal with the old key from here on (sealing.ts).
          await storeFingerprint(trx, next);
          const rows = await trx.selectFrom('channels').select(['id', 'key']).execute();
          for (const r of rows) {
            await trx.updateTable('channels').set({ key: seal(next, open(old, r.key, 'channel.key'), 'channel.key') }).where('id', '=', r.id).execute();
          }
          const staffRows = await trx.selectFrom('staff').select(['id', 'totp_secret']).where('totp_secret', 'is not', null).execute();
          for (const s of staffRows) {
            await trx.updateTable('staff').set({ totp_secret: seal(next, open(old, s.totp_secret!, 'staff.totp'), 'staff.totp') }).where('id', '=', s.id).execute();
          }
          await cliAudit(trx, 'cli:rekey', { channels: rows.length, totp_secrets: staffRows.length });
          return rows.length;
        });
        if (fileKey) commitSecretKeyFile(g.ctx.config);
        return count;
      });
      console.error(`re-encrypted ${n} channel keys; set GATEWAY_SECRET_KEY to the new key if you use it, and restart every running gateway (until then they refuse writes of keys)`);
      console.log(hex);
    });

  registerAffinityCommands(program, (fn) => withGateway(boot, (g) => fn(g.ctx, g.services.affinity)));

  program
    .command('ratio-config')
    .requiredOption('--file <path>', 'JSON object of maps (model_ratio, completion_ratio, …, model_price, group_ratio), - for standard input')
    .option('--replace', 'replace the whole configuration (a map left out is emptied) and print the prices removed; without it the models given are set and every other price stays')
    .description("store this gateway's own model ratios (the relay's prices, which ratio sync (G83) compares upstreams with); audited")
    .action(async (o: { file: string; replace?: boolean }) => {
      let json: unknown;
      try {
        json = JSON.parse(fs.readFileSync(o.file === '-' ? 0 : o.file, 'utf8'));
      } catch {
        throw new Error('the ratio configuration is not JSON');
      }
      const { config, removed } = await withGateway(boot, async (g) => {
        try {
          return await g.services.settings.setRatioConfig(await cliActor(), json, { operation: 'cli:ratio-config', merge: !o.replace });
        } catch (e) {
          // The catalog's English message names the field at fault (validateRatioConfig).
          const { AppError, renderMessage } = await import('../kit/http/errors.js');
          const { errorCatalog } = await import('../contract/errors/index.js');
          if (e instanceof AppError && errorCatalog[e.code]) throw new Error(renderMessage(errorCatalog[e.code]!, 'en', e.options.params));
          throw e;
        }
      });
      for (const price of removed) console.log(`removed: ${price}`);
      const sizes = Object.entries(config).filter(([, m]) => Object.keys(m).length > 0);
      console.log(`stored: ${sizes.map(([f, m]) => `${f} ${Object.keys(m).length}`).join(', ') || 'empty'}`);
    });

  program
    .command('deployment-settings')
    .description('io.net model deployments: turn them on or off and store the API key (sealed)')
    .option('--enabled <bool>', 'true or false')
    .option('--api-key <->', 'read the API key from standard input (-); an empty line removes it')
    .action(async (o: { enabled?: string; apiKey?: string }) => {
      if (o.enabled !== undefined && o.enabled !== 'true' && o.enabled !== 'false') throw new Error('--enabled must be true or false');
      if (o.apiKey !== undefined && o.apiKey !== '-') throw new Error('--api-key takes only - (the key is read from standard input, never from the command line)');
      const apiKey = o.apiKey === '-' ? (await readStdin()).trim() : undefined;
      await withGateway(boot, async (g) => {
        await g.services.deployments.setSettings({ enabled: o.enabled === undefined ? undefined : o.enabled === 'true', apiKey });
        await cliAudit(g.ctx.db, 'cli:deploy-set', { ...(o.enabled !== undefined ? { enabled: o.enabled === 'true' } : {}), ...(apiKey !== undefined ? { api_key: apiKey ? 'set' : 'removed' } : {}) });
      });
      console.log('deployment settings stored');
    });
}
