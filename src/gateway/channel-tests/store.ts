import type { Kysely } from 'kysely';
import type { GatewayDB } from '../db.js';
import { STATUS } from '../channels/types.js';

/** all: every channel but those disabled by hand; recovery: only auto-disabled ones (never disables). */
export type TestMode = 'all' | 'recovery';

type Db = Kysely<GatewayDB>;

function candidates(db: Db, mode: TestMode) {
  const q = db.selectFrom('channels');
  return mode === 'recovery' ? q.where('status', '=', STATUS.auto) : q.where('status', '!=', STATUS.manual);
}

export async function countCandidates(db: Db, mode: TestMode): Promise<number> {
  const row = await candidates(db, mode).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The next page of candidates after `afterId`, in id order; only what the job needs, never the key. */
export interface Candidate {
  id: number;
  status: number;
  auto_ban: number;
  channel_info: string;
}

export async function testCandidates(db: Db, mode: TestMode, afterId: number, limit: number): Promise<Candidate[]> {
  const rows = await candidates(db, mode).select(['id', 'status', 'auto_ban', 'channel_info']).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ id: Number(r.id), status: Number(r.status), auto_ban: Number(r.auto_ban), channel_info: r.channel_info }));
}
