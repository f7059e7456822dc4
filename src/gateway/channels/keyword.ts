import { sql, SqliteAdapter } from 'kysely';
import { dialectOf } from '../../kit/db/index.js';
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

/**
 * PostgreSQL: a sample of the searched texts (lower()ed name, base URL and tag of about SAMPLE_ROWS channels)
 * and the table's estimated row count, kept for a while: G27 estimates from it how many channels hold a
 * part of its keyword. A stale sample only makes a search pick a worse plan, never changes its results.
 */
const SAMPLE_ROWS = 2000;
const SAMPLE_TTL_MS = 10 * 60_000;
type Sample = { texts: string[][]; channels: number; /** per keyword: its rarest window and estimated matches */ estimates: Map<string, [string, number]> };
/** Keywords whose estimates a sample keeps (reading 2,000 sampled rows per window costs ~0.5 ms a keyword). */
const ESTIMATES_KEPT = 1000;
const samples = new WeakMap<Db, { expiresAt: number; sample: Promise<Sample> }>();

async function readSample(db: Db): Promise<Sample> {
  const [stats] = (await sql<{ n: number }>`select reltuples as n from pg_class where oid = to_regclass('channels')`.execute(db)).rows;
  // reltuples is -1 until the table was first analysed (or vacuumed): then count.
  const estimate = Number(stats?.n ?? -1) >= 0 ? Number(stats!.n) : await channelCount(db);
  // Whole blocks of rows at random (cheap); the whole table while it is small.
  const percent = estimate > SAMPLE_ROWS ? Math.max(0.01, (100 * SAMPLE_ROWS) / estimate) : 100;
  const { rows } = await sql<{ n: string; u: string; t: string }>`select lower(name) as n, lower(base_url) as u, lower(coalesce(tag, '')) as t
    from channels tablesample system (${sql.lit(Number(percent.toFixed(4)))}) limit ${sql.lit(5 * SAMPLE_ROWS)}`.execute(db);
  return { texts: rows.map((r) => [r.n, r.u, r.t]), channels: Math.max(estimate, rows.length), estimates: new Map() };
}

function sampleOf(db: Db): Promise<Sample> {
  const held = samples.get(db);
  if (held && held.expiresAt > Date.now()) return held.sample;
  const sample = readSample(db);
  samples.set(db, { expiresAt: Date.now() + SAMPLE_TTL_MS, sample });
  sample.catch(() => samples.delete(db));
  return sample;
}

/**
 * PostgreSQL: the part of a G27 keyword to ask the pg_trgm indexes for (its four characters that the
 * fewest sampled channels hold, or the whole keyword of 3–4), when the keyword's matches look few enough
 * that reading them all through the indexes and sorting them beats walking the page's order and checking
 * every row until the page is full; undefined otherwise (the query is left to the planner, whose cost
 * estimates undercharge the three lower() LIKEs per walked row and chose a 12 ms walk over a 5 ms read of
 * 1,111 matches at 100k channels). The whole keyword is still checked on every candidate.
 *
 * rowsNeeded: offset + page size; orderIndexed: the page's order is one an index walks.
 */
export async function keywordWindow(db: Db, keyword: string, rowsNeeded: number, orderIndexed: boolean): Promise<string | undefined> {
  if (dialectOf(db) !== 'postgres') return undefined;
  const chars = [...keyword];
  if (chars.length < 3) return undefined;
  const sample = await sampleOf(db);
  let estimate = sample.estimates.get(keyword);
  if (!estimate) {
    if (sample.estimates.size >= ESTIMATES_KEPT) sample.estimates.clear();
    sample.estimates.set(keyword, (estimate = rarestWindow(sample, chars)));
  }
  const [window, matches] = estimate;
  // Reading m matches costs about m heap rows; the walk about rowsNeeded × channels / m index entries and rows.
  return !orderIndexed || matches * matches < rowsNeeded * sample.channels ? window : undefined;
}

/** The keyword's 4-character window (the whole keyword of 3–4) that the fewest sampled channels hold, and their estimated number. */
function rarestWindow({ texts, channels }: Sample, chars: string[]): [string, number] {
  const windows = chars.length <= 4 ? [chars.join('')] : chars.slice(0, -3).map((_, i) => chars.slice(i, i + 4).join(''));
  let best = windows[0]!;
  let fewest = Infinity;
  for (const w of windows) {
    const part = w.toLowerCase();
    const n = texts.reduce((count, row) => count + (row.some((t) => t.includes(part)) ? 1 : 0), 0);
    if (n < fewest) [best, fewest] = [w, n];
  }
  return [best, (fewest / Math.max(1, texts.length)) * channels];
}
