import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';

/**
 * The database variants a suite runs on. SQLite always; PostgreSQL when TEST_POSTGRES_URL is set, and
 * Redis alongside it when TEST_REDIS_URL is set. With TEST_REQUIRE_SERVICES=1 (CI) a missing or
 * unreachable service fails the run instead of skipping.
 */
export type Variant = { name: 'sqlite' | 'postgres'; postgresUrl?: string; redisUrl?: string };

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? '';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const REQUIRED = process.env.TEST_REQUIRE_SERVICES === '1';

export function variants(): Variant[] {
  const list: Variant[] = [{ name: 'sqlite' }];
  if (POSTGRES_URL) list.push({ name: 'postgres', postgresUrl: POSTGRES_URL, redisUrl: REDIS_URL || undefined });
  else if (REQUIRED) throw new Error('TEST_REQUIRE_SERVICES=1 but TEST_POSTGRES_URL is not set');
  return list;
}

/** Runs `body` as one describe block per database variant; a skipped variant says why in one line. */
export function eachDatabase(title: string, body: (v: Variant) => void) {
  for (const v of variants()) describe(`${title} [${v.name}${v.redisUrl ? '+redis' : ''}]`, () => body(v));
  if (!POSTGRES_URL) {
    test(`${title} [postgres]`, { skip: 'TEST_POSTGRES_URL not set: PostgreSQL variant skipped (CI sets it)' }, () => {});
  }
}

export function tempDir(prefix = 'napi-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A PostgreSQL URL pointing at a fresh schema, and a function dropping it. */
export function freshSchema(baseUrl: string): { url: string; drop: () => Promise<void> } {
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  const u = new URL(baseUrl);
  u.searchParams.set('schema', schema);
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await c.end();
      }
    },
  };
}
