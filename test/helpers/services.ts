import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import pg from 'pg';

/**
 * The database variants a suite runs on. SQLite always; PostgreSQL when TEST_POSTGRES_URL is set and
 * MySQL/MariaDB when TEST_MYSQL_URL is set, each with Redis alongside when TEST_REDIS_URL is set. With
 * TEST_REQUIRE_SERVICES=1 (CI) a missing or unreachable service fails the run instead of skipping.
 */
export type Variant = { name: 'sqlite' | 'postgres' | 'mysql'; postgresUrl?: string; mysqlUrl?: string; redisUrl?: string };

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? '';
export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? '';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const REQUIRED = process.env.TEST_REQUIRE_SERVICES === '1';

export function variants(): Variant[] {
  const list: Variant[] = [{ name: 'sqlite' }];
  if (POSTGRES_URL) list.push({ name: 'postgres', postgresUrl: POSTGRES_URL, redisUrl: REDIS_URL || undefined });
  else if (REQUIRED) throw new Error('TEST_REQUIRE_SERVICES=1 but TEST_POSTGRES_URL is not set');
  if (MYSQL_URL) list.push({ name: 'mysql', mysqlUrl: MYSQL_URL, redisUrl: REDIS_URL || undefined });
  else if (REQUIRED) throw new Error('TEST_REQUIRE_SERVICES=1 but TEST_MYSQL_URL is not set');
  return list;
}

/** Runs `body` as one describe block per database variant; a skipped variant says why in one line. */
export function eachDatabase(title: string, body: (v: Variant) => void) {
  for (const v of variants()) describe(`${title} [${v.name}${v.redisUrl ? '+redis' : ''}]`, () => body(v));
  if (!POSTGRES_URL) {
    test(`${title} [postgres]`, { skip: 'TEST_POSTGRES_URL not set: PostgreSQL variant skipped (CI sets it)' }, () => {});
  }
  if (!MYSQL_URL) {
    test(`${title} [mysql]`, { skip: 'TEST_MYSQL_URL not set: MySQL variant skipped (CI sets it)' }, () => {});
  }
}

/**
 * The PostgreSQL variant with Redis (what several instances of a service share), or undefined after
 * registering a skipped test named `title` that says which of the two is missing.
 */
export function postgresWithRedis(title: string): Variant | undefined {
  const v = variants().find((x) => x.name === 'postgres' && x.redisUrl);
  if (!v) {
    const set = `${POSTGRES_URL ? 'pg' : '-'} ${REDIS_URL ? 'redis' : '-'}`;
    test(title, { skip: `needs TEST_POSTGRES_URL and TEST_REDIS_URL (set: ${set}); CI sets both` }, () => {});
  }
  return v;
}

/**
 * A database URL of its own for one server or test on the variant: a fresh PostgreSQL schema, a fresh
 * MySQL database, or the given SQLite file; drop() removes the first two.
 */
export function freshDatabase(v: Variant, sqliteFile: string): { url: string; drop: () => Promise<void> } {
  if (v.name === 'postgres') return freshSchema(v.postgresUrl!);
  if (v.name === 'mysql') return freshMysqlDatabase(v.mysqlUrl!);
  return { url: `sqlite://${sqliteFile}`, drop: async () => {} };
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

/**
 * A MySQL URL naming a fresh database `t_<random>` on the server of baseUrl (openDatabase creates it when
 * missing), and a function dropping it.
 */
export function freshMysqlDatabase(baseUrl: string): { url: string; drop: () => Promise<void> } {
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const u = new URL(baseUrl);
  u.searchParams.delete('database');
  u.pathname = '/' + name;
  return {
    url: u.toString(),
    async drop() {
      const c = await mysql.createConnection({ uri: baseUrl });
      try {
        await c.query(`drop database if exists \`${name}\``);
      } finally {
        await c.end();
      }
    },
  };
}
