import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { dialectOf } from '../../kit/db/index.js';
import { readOffThread } from '../../kit/db/read-thread.js';
import { RawJson } from '../../kit/http/envelope.js';
import type { GatewayDB } from '../db.js';
import { publicInfo, view } from './service.js';
import { PUBLIC_COLUMNS, type Db, type PublicChannel } from './store.js';

type RowsQuery = SelectQueryBuilder<GatewayDB, 'channels', {}>;

const INFO_AT = PUBLIC_COLUMNS.indexOf('channel_info');

/**
 * balance is the one REAL column. SQLite's JSON writes a whole REAL as 5.0 where JSON.stringify writes 5,
 * and infinity as 9.0e+999 where JSON.stringify writes null: whole values are passed as integers (exact
 * below 1e15), infinities as NULL; other values keep SQLite's form, which reads back as the same double.
 * PostgreSQL's JSON writes 5 and 1e+21 (the same doubles) but infinities and NaN as strings: those are NULL.
 */
const BALANCE = {
  sqlite: `case when abs("balance") < 1e15 and "balance" = cast("balance" as integer) then cast("balance" as integer)
  when abs("balance") <= 1.7976931348623157e308 then "balance" end`,
  postgres: `case when "balance" in ('Infinity', '-Infinity', 'NaN') then null else "balance" end`,
};

/** SQLite's json_object, or PostgreSQL's json_build_object as text (which keeps the keys in this order). */
function jsonObject(dialect: 'sqlite' | 'postgres', columns: readonly string[], extra = '') {
  const pairs = `${columns.map((c) => `'${c}', ${c === 'balance' ? BALANCE[dialect] : `"${c}"`}`).join(', ')}${extra}`;
  return dialect === 'sqlite' ? `json_object(${pairs})` : `json_build_object(${pairs})::text`;
}

// One row's view() as JSON in three parts: the columns before channel_info, channel_info as stored (its
// normalisation stays in JavaScript, exact for any stored text), then the columns after it and key.
const PARTS = Object.fromEntries(
  (['sqlite', 'postgres'] as const).map((d) => [d, {
    head: sql.raw(jsonObject(d, PUBLIC_COLUMNS.slice(0, INFO_AT))),
    tail: sql.raw(jsonObject(d, PUBLIC_COLUMNS.slice(INFO_AT + 1), `, 'key', ''`)),
  }]),
) as Record<'sqlite' | 'postgres', { head: RawBuilder<unknown>; tail: RawBuilder<unknown> }>;

/**
 * The JSON array of view(row) for every row the query selects, in its order. On SQLite and PostgreSQL
 * the database writes each row's JSON (no row objects to build and serialise); SQLite on
 * the read thread when `heavy` (a query that may scan or sort many rows; a cheap one costs less than the
 * thread's round trip). MySQL serialises view() rows (its JSON objects reorder their keys).
 */
export async function itemsJson(db: Db, q: RowsQuery | null, heavy: boolean): Promise<RawJson> {
  if (!q) return new RawJson('[]');
  const dialect = dialectOf(db);
  if (dialect === 'mysql') {
    const rows = (await q.select([...PUBLIC_COLUMNS]).execute()) as PublicChannel[];
    return new RawJson(JSON.stringify(rows.map(view)));
  }
  const { head, tail } = PARTS[dialect];
  const query = q.select([sql<string>`${head}`.as('h'), 'channel_info', sql<string>`${tail}`.as('t')]);
  const rows = heavy && dialect === 'sqlite' ? await readOffThread(db, query) : await query.execute();
  const infos = new Map<string, string>();
  let out = '[';
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    let info = infos.get(r.channel_info);
    if (info === undefined) infos.set(r.channel_info, (info = JSON.stringify(publicInfo(r.channel_info))));
    out += (i ? ',' : '') + r.h.slice(0, -1) + ',"channel_info":' + info + ',' + r.t.slice(1);
  }
  return new RawJson(out + ']');
}
