/**
 * The edge bench's databases (bench/edge.ts, bench/edge-chat.ts, bench/edge-scale.ts): where PostgreSQL is,
 * fresh edge databases made from the edge's migrations with owners, keys and credited wallets, and the ledger
 * check that compares every wallet with the runs settled against it.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase } from '../src/kit/db/index.js';
import type { EdgeContext } from '../src/edge/context.js';
import { FINAL_STATUSES, type EdgeDB } from '../src/edge/db.js';
import { KeyService } from '../src/edge/keys/service.js';
import { edgeMigrations } from '../src/edge/migrations/index.js';
import { setModel } from '../src/edge/models/store.js';
import { credit } from '../src/edge/wallets/store.js';

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const WALLETS = Number(process.env.BENCH_EDGE_WALLETS ?? 1000);
/** What every bench wallet is credited with: far more than any run of the bench can spend. */
export const CREDIT = 1e12;

/** A PostgreSQL URL on the bench's schema `name`. */
export function schemaUrl(name: string): string {
  const u = new URL(POSTGRES_URL);
  u.searchParams.set('schema', name);
  return u.toString();
}

/** Why PostgreSQL cannot be used, or undefined when it answers. */
export async function postgresMissing(): Promise<string | undefined> {
  const u = new URL(POSTGRES_URL);
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (e) {
    return `PostgreSQL at ${u.host} not reachable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A fresh edge database at `url` from the edge's migrations: the public model `model` (reserving `reserve`),
 * WALLETS owners each with one key (the key service, as `edge key issue`) and a wallet of CREDIT units
 * (wallets/store's credit, as `edge wallet credit`). Returns the keys, the first owner's first.
 */
export async function prepareDatabase(url: string, model: string, reserve: number): Promise<string[]> {
  const database = await openDatabase<EdgeDB>(url);
  try {
    await migrate(database, 'edge', edgeMigrations(database.dialect));
    await setModel(database.db, model, { reserveAmount: reserve, enabled: true, gatewayModel: null, group: 'default', overdraft: 0 });
    return await database.db.transaction().execute(async (trx) => {
      const keys = new KeyService({ db: trx } as unknown as EdgeContext);
      const tokens: string[] = [];
      for (let i = 0; i < WALLETS; i++) {
        const issued = await keys.issue(`bench-${i}`);
        const owner = await trx.selectFrom('edge_owners').select('id').where('name', '=', issued.owner).executeTakeFirstOrThrow();
        await credit(trx, Number(owner.id), CREDIT);
        tokens.push(issued.token);
      }
      return tokens;
    });
  } finally {
    await database.close();
  }
}

export interface Ledger {
  /** Runs not yet final when the check gave up waiting. */
  open: number;
  runs: number;
  succeeded: number;
  settlements: number;
  charged: number;
  /** Wallets (of those that ran anything) whose row disagrees with their settled runs, with the first few reasons. */
  wrong: number;
  reasons: string[];
}

const FINAL = FINAL_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * Waits (up to `waitMs`) for every run of the edge database at `url` to be final, then checks each wallet
 * against the runs settled against it: balance = CREDIT − Σ charged, used_quota = Σ charged, reserved = the
 * reservations of runs still open, one settlement per final run and its charge the run's cost.
 */
export async function checkLedger(url: string, waitMs = 15_000): Promise<Ledger> {
  const database = await openDatabase<EdgeDB>(url);
  try {
    const q = <T>(text: string) => sql.raw<T>(text).execute(database.db).then((r) => r.rows);
    const until = Date.now() + waitMs;
    let open = 0;
    do {
      open = Number((await q<{ n: number }>(`select count(*) as n from edge_runs where status not in (${FINAL})`))[0]!.n);
      if (open > 0) await new Promise((r) => setTimeout(r, 200));
    } while (open > 0 && Date.now() < until);
    const rows = await q<Record<string, string | number | null>>(
      `select w.owner_id, w.balance, w.reserved, w.used_quota,
         (select count(*) from edge_runs r where r.owner_id = w.owner_id) as runs,
         (select count(*) from edge_runs r where r.owner_id = w.owner_id and r.status = 'succeeded') as succeeded,
         (select count(*) from edge_runs r where r.owner_id = w.owner_id and r.status in (${FINAL})) as final,
         (select coalesce(sum(r.cost), 0) from edge_runs r where r.owner_id = w.owner_id and r.status in (${FINAL})) as cost,
         (select coalesce(sum(r.reserved_amount), 0) from edge_runs r where r.owner_id = w.owner_id and r.status not in (${FINAL})) as open_reserved,
         (select count(*) from edge_settlements s where s.owner_id = w.owner_id) as settlements,
         (select coalesce(sum(s.charged), 0) from edge_settlements s where s.owner_id = w.owner_id) as charged
       from edge_wallets w`,
    );
    const ledger: Ledger = { open, runs: 0, succeeded: 0, settlements: 0, charged: 0, wrong: 0, reasons: [] };
    for (const r of rows) {
      const n = (k: string) => Number(r[k]);
      ledger.runs += n('runs');
      ledger.succeeded += n('succeeded');
      ledger.settlements += n('settlements');
      ledger.charged += n('charged');
      const off = [
        n('balance') !== CREDIT - n('charged') && `balance ${n('balance')} ≠ ${CREDIT} − ${n('charged')} charged`,
        n('used_quota') !== n('charged') && `used ${n('used_quota')} ≠ ${n('charged')} charged`,
        n('reserved') !== n('open_reserved') && `reserved ${n('reserved')} ≠ ${n('open_reserved')} of open runs`,
        n('settlements') !== n('final') && `${n('settlements')} settlements for ${n('final')} final runs`,
        n('cost') !== n('charged') && `runs' cost ${n('cost')} ≠ ${n('charged')} charged`,
      ].filter(Boolean) as string[];
      if (!off.length) continue;
      ledger.wrong++;
      if (ledger.reasons.length < 3) ledger.reasons.push(`owner ${r.owner_id}: ${off.join(', ')}`);
    }
    return ledger;
  } finally {
    await database.close();
  }
}
