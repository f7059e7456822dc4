import { sql, SqliteAdapter } from 'kysely';
import { prepared } from '../../kit/db/prepared.js';
import { readOffThread } from '../../kit/db/read-thread.js';
import { TtlCache } from '../../kit/cache/ttl-cache.js';
import type { Db } from './store.js';

/** FTS5 phrase of a text: the trigram index finds channels whose columns contain it (any case). */
function ftsPhrase(text: string) {
  return '"' + text.replace(/"/g, '""') + '"';
}

/**
 * How many channels hold each trigram, read from the fts5vocab table. Reading one costs as much as its
 * list of channels (about 1.5 ms for a trigram every channel has), so frequencies are kept for a while;
 * a stale one only makes a search choose a less selective trigram, never changes its results.
 */
const FREQUENCY_TTL_MS = 10 * 60_000;
const frequencies = new WeakMap<Db, TtlCache<string, number>>();

async function frequency(db: Db, trigram: string): Promise<number> {
  let cache = frequencies.get(db);
  if (!cache) frequencies.set(db, (cache = new TtlCache(FREQUENCY_TTL_MS, 20_000)));
  const term = trigram.toLowerCase();
  let n = cache.get(term);
  if (n === undefined) {
    const [r] = await readOffThread(db, sql<{ doc: number }>`select doc from channels_fts_vocab where term = ${term}`);
    cache.set(term, (n = Number(r?.doc ?? 0)));
  }
  return n;
}

/** An unfiltered count(*) reads only the page headers of the smallest index: cheap enough to ask each time. */
const countAll = prepared((db: Db) => db.selectFrom('channels').select((eb) => eb.fn.countAll<number>().as('n')));

async function channelCount(db: Db): Promise<number> {
  return Number((await countAll(db)).rows[0]?.n ?? 0);
}

/**
 * SQLite: the FTS5 query narrowing G27's candidates for a keyword of 3+ characters (undefined otherwise;
 * PostgreSQL serves the same LIKEs from its pg_trgm indexes). Any part of the keyword gives a superset
 * of the LIKE matches, which still decide exactly. Matching the whole keyword as a phrase reads the
 * channel lists of all its trigrams, and in names like "channel-42" most trigrams are in every channel;
 * so only the two adjacent trigrams (four characters) that together are rarest are matched.
 *
 * Undefined too when even those would keep a large part of the channels (estimated from the trigram
 * frequencies, taken as independent): reading their long lists and joining nearly every channel costs
 * more than checking every row, and a page in an indexed order then stops after its last match.
 */
export async function keywordIndexQuery(db: Db, keyword: string): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return undefined;
  const chars = [...keyword];
  if (chars.length < 3) return undefined;
  const df: number[] = [];
  for (let i = 0; i + 3 <= chars.length; i++) df.push(await frequency(db, chars.slice(i, i + 3).join('')));
  let best = 0;
  for (let i = 1; i + 1 < df.length; i++) if (df[i]! * df[i + 1]! < df[best]! * df[best + 1]!) best = i;
  const channels = await channelCount(db);
  const estimate = df.length === 1 ? df[0]! : (df[best]! * df[best + 1]!) / Math.max(1, channels);
  if (estimate >= channels / 4) return undefined;
  return ftsPhrase(df.length === 1 ? keyword : chars.slice(best, best + 4).join(''));
}
