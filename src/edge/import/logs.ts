import { LOG_TYPE } from '../../contract/customer.js';
import { emptyReport, skip, type ImportSession, type TableReport, type TableStep } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { int, text, truthy, type Source } from '../../kit/db/source.js';
import { ensureCustomerOwner } from '../customers/owners.js';
import type { SourceRow } from './fields.js';
import { balanceJson, creditExists, insertCreditRow, insertEndedRun, tokenKeys } from './store.js';
import type { UserLookup } from './wallets.js';
import { uuidV7 } from '../../kit/crypto/uuid7.js';

/** Problems listed in the report at most (a log may leave out millions of rows; the rest are counted). */
const MAX_LISTED = 1000;
const MAX_MODEL_ID = 128;

export const logCreditId = (logId: string) => `import:log:${logId}`;

/**
 * new-api `logs` of the last `days` days, for the usage page: consume rows (type 2) become ended sync runs
 * (succeeded, charged their quota) and top-up rows (type 1) credit rows of kind `topup`. Neither moves
 * money: the run has no reservation or settlement, and the top-up credit leaves the balance alone, since
 * the imported balance and used_quota already hold both. Read a page at a time, newest days only.
 */
export async function importLogs(source: Source, session: ImportSession, userIdOf: UserLookup, days: number, now = Date.now()): Promise<TableReport> {
  const since = Math.floor(now / 1000) - days * 86400;
  const report = emptyReport('logs');
  const tokenIds = await session.batch((trx) => importMap.all(trx, session.opts.source, 'tokens'));
  const types = [LOG_TYPE.topup, LOG_TYPE.consume];
  for await (const page of source.walk('logs', 'id', (q) => q.where('created_at', '>=', since).where('type', 'in', types))) {
    const keys = await session.batch((trx) => tokenKeys(trx, [...new Set(page.map((l) => tokenIds.get(String(int(l.token_id)))).filter((id): id is number => id !== undefined))]));
    add(report, await session.run(logStep(page, userIdOf, tokenIds, keys)));
  }
  report.note = `the last ${days} days: consume rows as ended calls, top-up rows as credits that leave the balance alone`;
  return report;
}

function add(total: TableReport, part: TableReport) {
  for (const k of ['read', 'imported', 'updated', 'unchanged', 'skipped', 'failed'] as const) total[k] += part[k];
  const room = Math.max(0, MAX_LISTED - total.problems.length);
  total.problems.push(...part.problems.slice(0, room));
  const more = part.problems.length - Math.min(room, part.problems.length);
  if (more) total.unlisted = (total.unlisted ?? 0) + more;
}

function logStep(rows: SourceRow[], userIdOf: UserLookup, tokenIds: Map<string, number>, keys: Map<number, string>): TableStep<SourceRow> {
  const ownerOf = (l: SourceRow) => userIdOf(String(int(l.user_id)));
  return {
    table: 'logs',
    rows,
    id: (l) => String(l.id),
    precheck(l) {
      if (ownerOf(l) === undefined) return 'its user was not imported';
      if (int(l.type) === LOG_TYPE.consume && !text(l.model_name)) return 'no model name';
      if (text(l.model_name).length > MAX_MODEL_ID) return `model name longer than ${MAX_MODEL_ID} characters`;
      return null;
    },
    fields: (l) => ({ user: ownerOf(l), type: int(l.type), created_at: int(l.created_at), quota: int(l.quota), model_name: text(l.model_name), token_id: int(l.token_id) }),
    async insert(trx, l) {
      const ownerId = await ensureCustomerOwner(trx, ownerOf(l)!);
      const at = int(l.created_at);
      if (int(l.type) === LOG_TYPE.topup) {
        const creditId = logCreditId(String(l.id));
        if (await creditExists(trx, creditId)) return skip('imported by an earlier run');
        await insertCreditRow(trx, { credit_id: creditId, owner_id: ownerId, amount: Math.max(0, int(l.quota)), wallet: await balanceJson(trx, ownerId), created_at: at, kind: 'topup', reason: text(l.content).slice(0, 255) });
        return 0;
      }
      const tokenId = tokenIds.get(String(int(l.token_id)));
      const finished = at * 1000;
      const started = finished - Math.max(0, int(l.use_time)) * 1000;
      await insertEndedRun(trx, {
        run_id: uuidV7(),
        request_id: text(l.request_id).slice(0, 64),
        owner_id: ownerId,
        key_id: (tokenId !== undefined ? keys.get(tokenId) : undefined) ?? '',
        public_model_id: text(l.model_name),
        input: '',
        api_version: 'v1',
        reserved_amount: 0,
        status: 'succeeded',
        revision: 1,
        traceparent: null,
        created_at: started,
        kind: 'sync',
        format: 'chat',
        attempts: 1,
        prompt_tokens: Math.max(0, int(l.prompt_tokens)),
        completion_tokens: Math.max(0, int(l.completion_tokens)),
        cost: Math.max(0, int(l.quota)),
        started_at: started,
        finished_at: finished,
        deadline_at: finished,
        token_id: tokenId ?? 0,
        token_name: text(l.token_name).slice(0, 64),
        stream: truthy(l.is_stream) ? 1 : 0,
      });
      // A run is found by its run id, which the import map's number cannot hold; log rows do not change.
      return 0;
    },
    async update() {
      return skip('changed in new-api since it was imported: the imported row was kept');
    },
  };
}
