// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import type { Command } from 'commander';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import type { createEdgeContext } from './app.js';
import type { RelayPort } from '../contract/relay.js';

type Boot = () => { config: Config; runtime: Runtime } | Promise<{ config: Config; runtime: Runtime }>;
type Edge = Awaited<ReturnType<typeof createEdgeContext>>;
/** The gateway's relay opened in this process (src/cli.ts wires it; the edge does not import the gateway). */
export type LocalRelay = (config: Config, runtime: Runtime) => Promise<{ relay: RelayPort; close(): Promise<void> }>;

/**
 * Opens the edge database, runs `fn`, and always closes it again. `local`: the commands that call the relay
 * get the gateway's relay in this process when the gateway is one of SERVICES and EDGE_RELAY_URL is unset.
 */
async function withEdge<T>(boot: Boot, fn: (e: Edge) => Promise<T>, local?: LocalRelay): Promise<T> {
  const { config, runtime } = await boot();
  const { createEdgeContext } = await import('./app.js');
  const opened = local && !config.edge.runs.relayUrl && config.services.includes('gateway') ? await local(config, runtime) : null;
  try {
    const e = await createEdgeContext(config, runtime, opened?.relay);
    try {
      return await fn(e);
    } finally {
      await e.close();
    }
  } finally {
    await opened?.close();
    await runtime.close();
  }
}

/** A non-negative integer option (digits only). */
function amount(flag: string, v: string, min = 0): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min) throw new Error(`${flag} must be an integer of at least ${min}`);
  return n;
}

/** Who a change is audited as (edge_audit): `cli:` and the operating-system user. */
async function cliActor(): Promise<string> {
  const { cliActorName } = await import('../kit/cli/actor.js');
  return cliActorName();
}

const iso = (s: number | null) => (s === null ? '-' : new Date(Number(s) * 1000).toISOString());

/** Edge commands: developer keys, public models, wallets, webhooks, the dispatcher. Secrets are the last stdout line. */
export function registerEdgeCommands(program: Command, boot: Boot, local?: LocalRelay) {
  const edge = program.command('edge').description('the edge (machine-facing public API): keys, models, wallets, webhooks');

  const key = edge.command('key').description('developer keys (svc_sk_…)');
  key
    .command('issue')
    .requiredOption('--owner <name>', 'the owner (created when new)')
    .description('issue a key; prints it once, last')
    .action(async (o: { owner: string }) => {
      const by = await cliActor();
      const r = await withEdge(boot, (e) => e.services.admin.issueKey(o.owner, by));
      console.log(`key ${r.key_id} issued for ${r.owner} (shown once, store it now)`);
      console.log(r.key);
    });
  key
    .command('revoke')
    .description('revoke a developer key (its calls are refused at once)')
    .argument('<keyId>', 'the key id (from edge key list)')
    .action(async (keyId: string) => {
      const by = await cliActor();
      const done = await withEdge(boot, (e) => e.services.admin.revokeKey(keyId, by));
      if (!done) throw new Error(`no active key ${keyId}`);
      console.log(`key ${keyId} revoked`);
    });
  key.command('list').description('every key: id, owner, created, state (never the key)').action(async () => {
    const rows = await withEdge(boot, (e) => e.services.keys.list());
    for (const r of rows) console.log(`${r.key_id}\t${r.owner}\t${iso(r.created_at)}\t${r.revoked_at === null ? 'active' : `revoked ${iso(r.revoked_at)}`}`);
  });

  const model = edge.command('model').description('public models and their reserve amounts');
  model
    .command('set')
    .description('add or change a public model')
    .argument('<publicModelId>', 'the model id clients ask for')
    .requiredOption('--reserve <amount>', 'units one request reserves (1 unit = 1 gateway quota = $0.000002)')
    .option('--gateway-model <name>', 'the model name the gateway relay serves it as (default: the same id)')
    .option('--group <group>', 'the gateway channel group its calls are routed in', 'default')
    .option('--overdraft <amount>', 'units a call may cost beyond its reservation, from the available balance', '0')
    .option('--disabled', 'refuse requests for it (400 model_disabled)')
    .action(async (id: string, o: { reserve: string; gatewayModel?: string; group: string; overdraft: string; disabled?: boolean }) => {
      const settings = { reserve_amount: amount('--reserve', o.reserve), enabled: !o.disabled, gateway_model: o.gatewayModel ?? null, group: o.group, overdraft: amount('--overdraft', o.overdraft) };
      const by = await cliActor();
      const m = await withEdge(boot, (e) => e.services.admin.setModel(id, settings, by));
      console.log(`model ${id}: reserve ${m.reserve_amount}, gateway model ${m.gateway_model ?? id}, group ${m.group}, overdraft ${m.overdraft}, ${m.enabled ? 'enabled' : 'disabled'}`);
    });
  model.command('list').description('public id, reserve, gateway model, group, overdraft, state').action(async () => {
    const rows = await withEdge(boot, (e) => e.services.admin.listModels());
    for (const r of rows) console.log([r.public_model_id, r.reserve_amount, r.gateway_model ?? r.public_model_id, r.group, r.overdraft, r.enabled ? 'enabled' : 'disabled'].join('\t'));
  });

  const wallet = edge.command('wallet').description('owner wallets (integer units)');
  wallet
    .command('credit')
    .description("add units to an owner's wallet (500,000 units = 1 USD)")
    .requiredOption('--owner <name>', 'the owner (created when new)')
    .requiredOption('--amount <n>', 'units to add')
    .option('--idempotency-key <key>', 'credit once: run again with the same key (after a failure, say), it adds nothing and prints the same wallet')
    .action(async (o: { owner: string; amount: string; idempotencyKey?: string }) => {
      const n = amount('--amount', o.amount, 1);
      const by = await cliActor();
      const w = await withEdge(boot, (e) => e.services.admin.credit(o.owner, n, by, o.idempotencyKey === undefined ? undefined : `cli:${o.idempotencyKey}`));
      console.log(`wallet of ${o.owner}: balance ${w.balance}, reserved ${w.reserved}, available ${w.available}`);
    });
  wallet
    .command('show')
    .description("an owner's balance, reservations and settled runs")
    .requiredOption('--owner <name>', 'the owner')
    .action(async (o: { owner: string }) => {
      const w = await withEdge(boot, (e) => e.services.admin.wallet(o.owner));
      console.log(w ? `wallet ${w.wallet_id} of ${o.owner}: balance ${w.balance}, reserved ${w.reserved}, available ${w.available}; settled ${w.settled_runs} run(s): ${w.settled_charged} charged of ${w.settled_reserved} reserved` : `no wallet for ${o.owner}`);
    });

  edge
    .command('usage')
    .requiredOption('--owner <name>', 'the owner')
    .option('--days <n>', 'how many days back', '30')
    .description("an owner's calls, tokens and cost per day and public model (tab-separated)")
    .action(async (o: { owner: string; days: string }) => {
      const days = amount('--days', o.days, 1);
      const lines = await withEdge(boot, (e) => e.services.admin.usage(o.owner, days));
      if (!lines) throw new Error(`no owner ${o.owner}`);
      console.log(['day', 'model', 'calls', 'failed', 'prompt_tokens', 'completion_tokens', 'cost'].join('\t'));
      for (const l of lines) console.log([l.day, l.model, l.calls, l.failed, l.prompt_tokens, l.completion_tokens, l.cost].join('\t'));
    });

  edge
    .command('audit')
    .description("print the edge's audit log, newest first: every change of wallets, public models, keys and webhooks (CLI and console)")
    .option('--limit <n>', 'rows (at most 10000)', '50')
    .action(async (o: { limit: string }) => {
      const limit = Math.min(10000, amount('--limit', o.limit, 1));
      const { readAudit } = await import('./audit/store.js');
      const rows = await withEdge(boot, (e) => readAudit(e.ctx.db, limit));
      for (const r of rows) console.log(JSON.stringify({ ...r, id: Number(r.id), created_at: Number(r.created_at), detail: JSON.parse(r.detail) }));
    });

  edge
    .command('reconcile')
    .description('settle runs past their deadline: release never-started ones, charge started ones what the gateway says they cost')
    .action(async () => {
      const { reconcile } = await import('./runs/reconcile.js');
      const done = await withEdge(boot, (e) => reconcile(e.ctx, e.services.relayConfigured ? e.services.relay : null), local);
      for (const r of done) console.log(`${r.runId}\t${r.outcome}\t${r.charged}`);
      console.log(`${done.length} run(s) reconciled: ${done.filter((r) => r.outcome === 'charged').length} charged, ${done.filter((r) => r.outcome === 'released').length} released`);
    });

  edge
    .command('worker')
    .description('execute admitted runs until SIGINT/SIGTERM (or, with --once, those that can be taken now)')
    .option('--once', 'take what is free now, wait for those runs, then exit')
    .action(async (o: { once?: boolean }) => {
      const { RunWorker } = await import('./runs/worker.js');
      await withEdge(
        boot,
        async (e) => {
          if (!e.services.relayConfigured) throw new Error('no gateway relay: set EDGE_RELAY_URL and EDGE_RELAY_TOKEN_KEY, or run with the gateway in SERVICES');
          const w = new RunWorker(e.ctx, e.services.relay);
          if (o.once) {
            await w.tick();
            await w.drain();
            return;
          }
          w.start();
          await new Promise<void>((resolve) => {
            process.once('SIGINT', resolve);
            process.once('SIGTERM', resolve);
          });
          await w.stop();
        },
        local,
      );
    });

  const webhook = edge.command('webhook').description('webhook endpoints of owners');
  webhook
    .command('add')
    .requiredOption('--owner <name>', 'the owner whose events it receives')
    .requiredOption('--url <url>', 'where events are POSTed (https)')
    .description('add an endpoint; prints its signing secret once, last')
    .action(async (o: { owner: string; url: string }) => {
      const by = await cliActor();
      const r = await withEdge(boot, (e) => e.services.admin.addWebhook(o.owner, o.url, by));
      console.log(`endpoint ${r.endpoint_id} added for ${r.owner} (signing secret shown once)`);
      console.log(r.secret);
    });
  webhook.command('list').description('every endpoint: id, owner, URL, state').action(async () => {
    const rows = await withEdge(boot, (e) => e.services.webhooks.list());
    for (const r of rows) console.log(`${r.endpoint_id}\t${r.owner}\t${r.url}\t${r.removed_at === null ? 'active' : `removed ${iso(r.removed_at)}`}`);
  });
  webhook
    .command('remove')
    .description('remove an endpoint (no further deliveries)')
    .argument('<endpointId>', 'the endpoint id (from edge webhook list)')
    .action(async (id: string) => {
      const by = await cliActor();
      if (!(await withEdge(boot, (e) => e.services.admin.removeWebhook(id, by)))) throw new Error(`no active endpoint ${id}`);
      console.log(`endpoint ${id} removed`);
    });
  webhook
    .command('replay')
    .description('queue the deliveries of past events again')
    .option('--event <eventId>', 'one event')
    .option('--since <sequence>', 'every event from this outbox sequence number on')
    .action(async (o: { event?: string; since?: string }) => {
      if ((o.event === undefined) === (o.since === undefined)) throw new Error('give exactly one of --event and --since');
      const where = o.event !== undefined ? { eventId: o.event } : { sinceSequence: amount('--since', o.since!) };
      const r = await withEdge(boot, (e) => e.services.webhooks.replay(where));
      if (o.event !== undefined && r.events === 0) throw new Error(`no event ${o.event}`);
      console.log(`${r.events} event(s), ${r.queued} delivery(ies) queued`);
    });

  edge
    .command('dispatch')
    .description('run a webhook dispatcher until SIGINT/SIGTERM (or, with --once, until nothing is due)')
    .option('--once', 'deliver what is due now, then exit')
    .action(async (o: { once?: boolean }) => {
      const { Dispatcher } = await import('./webhooks/dispatcher.js');
      await withEdge(boot, async (e) => {
        const d = new Dispatcher(e.ctx);
        if (o.once) {
          console.log(`${await d.drain()} delivery attempt(s)`);
          return;
        }
        d.start();
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await d.stop();
      });
    });
}
