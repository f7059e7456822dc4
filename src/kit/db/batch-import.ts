import type { Kysely } from 'kysely';
import { AppError } from '../http/errors.js';
import { changedFields, fieldDigests, importMap } from './import-map.js';

/** A row left out, with a reason fit for an operator's report (never a value of the row). */
export class Skip {
  constructor(readonly reason: string) {}
}
export const skip = (reason: string) => new Skip(reason);

/** How one source table is brought in: rows read up front, written a batch per transaction. */
export interface TableStep<S> {
  /** Report name, also the import map's kind. */
  table: string;
  rows: S[];
  id(row: S): string;
  /** The fields a later run compares (by digest) to decide between unchanged and updated. */
  fields(row: S): Record<string, unknown>;
  /** A reason to leave the row out before anything is looked up (checked on every run). */
  precheck?(row: S): string | null;
  /** Runs first in every batch transaction (a key check, for instance). */
  begin?(trx: Kysely<any>): Promise<void>;
  /** Writes a new row; answers its local id, or a Skip. */
  insert(trx: Kysely<any>, row: S): Promise<number | Skip>;
  /** Applies the fields that changed in the source since the last run. */
  update(trx: Kysely<any>, localId: number, row: S, changed: string[]): Promise<void | Skip>;
}

export interface Problem {
  id: string;
  reason: string;
}

export interface TableReport {
  table: string;
  read: number;
  imported: number;
  updated: number;
  unchanged: number;
  skipped: number;
  /** Rows of batches that failed and were rolled back. */
  failed: number;
  problems: Problem[];
  /** Problems counted but not kept (a table that may list millions of them keeps the first ones). */
  unlisted?: number;
  /** One line saying what else happened (for tables that are derived rather than copied). */
  note?: string;
}

/** Rows an operator must act on, listed after the tables: a heading, what to do, then each row. */
export interface Notice {
  heading: string;
  action: string;
  items: Problem[];
}

export interface ImportOptions {
  /** Names the other system in the import map (e.g. its product name). */
  source: string;
  dryRun: boolean;
  batchSize?: number;
}

export function emptyReport(table: string): TableReport {
  return { table, read: 0, imported: 0, updated: 0, unchanged: 0, skipped: 0, failed: 0, problems: [] };
}

/**
 * Writes imported rows into one database. A real run commits one transaction per batch, so a failing batch
 * leaves nothing of itself behind and the batches before it stay. A dry run does the same work inside one
 * outer transaction (each batch a savepoint) and rolls it all back at finish(), so its report is what a real
 * run would do.
 */
export class ImportSession {
  private outer: any;

  constructor(
    private readonly db: Kysely<any>,
    readonly opts: ImportOptions,
  ) {}

  /** Runs `fn` as one batch: committed (or, in a dry run, kept until finish) when it returns, undone when it throws. */
  async batch<T>(fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    if (!this.opts.dryRun) return this.db.transaction().execute(fn);
    this.outer ??= await this.db.startTransaction().execute();
    const sp = await this.outer.savepoint('import_batch').execute();
    try {
      const r = await fn(sp);
      await sp.releaseSavepoint('import_batch').execute();
      return r;
    } catch (e) {
      await sp.rollbackToSavepoint('import_batch').execute();
      throw e;
    }
  }

  /** Ends the run: a dry run rolls back everything it did. */
  async finish() {
    if (this.outer) await this.outer.rollback().execute();
    this.outer = undefined;
  }

  async run<S>(step: TableStep<S>): Promise<TableReport> {
    const report = emptyReport(step.table);
    report.read = step.rows.length;
    const size = this.opts.batchSize ?? 200;
    for (let i = 0; i < step.rows.length; i += size) {
      const rows = step.rows.slice(i, i + size);
      const local = emptyReport(step.table);
      try {
        await this.batch(async (trx) => {
          if (step.begin) await step.begin(trx);
          for (const row of rows) await this.one(trx, step, row, local);
        });
      } catch (e) {
        report.failed += rows.length;
        const first = step.id(rows[0]!);
        const last = step.id(rows[rows.length - 1]!);
        report.problems.push({ id: first === last ? first : `${first}…${last}`, reason: `batch rolled back: ${describe(e)}` });
        continue;
      }
      for (const k of ['imported', 'updated', 'unchanged', 'skipped'] as const) report[k] += local[k];
      report.problems.push(...local.problems);
    }
    return report;
  }

  private async one<S>(trx: Kysely<any>, step: TableStep<S>, row: S, report: TableReport) {
    const id = step.id(row);
    const early = step.precheck?.(row);
    if (early) return skipped(report, id, early);
    const digest = fieldDigests(step.fields(row));
    const mapped = await importMap.get(trx, this.opts.source, step.table, id);
    const now = Math.floor(Date.now() / 1000);
    if (!mapped) {
      const r = await step.insert(trx, row);
      if (r instanceof Skip) return skipped(report, id, r.reason);
      await importMap.put(trx, this.opts.source, step.table, id, r, digest, now, true);
      report.imported++;
      return;
    }
    const changed = changedFields(mapped.digest, digest);
    if (changed.length === 0) {
      report.unchanged++;
      return;
    }
    const r = await step.update(trx, mapped.localId, row, changed);
    if (r instanceof Skip) return skipped(report, id, r.reason);
    await importMap.put(trx, this.opts.source, step.table, id, mapped.localId, digest, now, false);
    report.updated++;
  }
}

function skipped(report: TableReport, id: string, reason: string) {
  report.skipped++;
  report.problems.push({ id, reason });
}

/** An error as a report line: an AppError's code, else the first line of its message, shortened. */
function describe(e: unknown): string {
  if (e instanceof AppError) return e.code;
  return String((e as Error)?.message ?? e).split('\n')[0]!.slice(0, 200);
}

const MAX_PROBLEM_LINES = 50;

/**
 * The report as text: one line of counts per table, then the rows left out and why; then each notice that
 * has rows, every row listed (an operator acts on each).
 */
export function formatReport(reports: TableReport[], dryRun: boolean, notices: Notice[] = []): string {
  const lines: string[] = [dryRun ? 'dry run: nothing was written; this is what an import would do' : 'import finished'];
  for (const r of reports) {
    const counts = [`read ${r.read}`, `imported ${r.imported}`, `updated ${r.updated}`, `unchanged ${r.unchanged}`, `skipped ${r.skipped}`];
    if (r.failed) counts.push(`failed ${r.failed}`);
    lines.push(`${r.table}: ${counts.join(', ')}`);
    if (r.note) lines.push(`  ${r.note}`);
    for (const p of r.problems.slice(0, MAX_PROBLEM_LINES)) lines.push(`  ${p.id}: ${p.reason}`);
    const more = Math.max(0, r.problems.length - MAX_PROBLEM_LINES) + (r.unlisted ?? 0);
    if (more) lines.push(`  … and ${more} more`);
  }
  for (const n of notices) {
    if (!n.items.length) continue;
    lines.push(`${n.heading}: ${n.items.length}`, `  what to do: ${n.action}`);
    for (const p of n.items) lines.push(`  ${p.id}: ${p.reason}`);
  }
  return lines.join('\n');
}
