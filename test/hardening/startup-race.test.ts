import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/kit/db/index.js';
import { freshDatabase, tempDir, variants, type Variant } from '../helpers/services.js';
import type { StartupRequest } from './startup-child.js';

// `npm start` and a CLI command started together on a fresh DATA_DIR failed about one time in seven
// ("migration 0004_runs failed: duplicate column name", "table edge_outbox already exists"): Kysely's
// migrator takes no lock on SQLite. Here four processes start at once on one fresh database, round after
// round: two like the server (every service built, then closed), one `staff create`, one `edge key list`.

const CHILD = path.join(import.meta.dirname, 'startup-child.ts');
// MySQL's DDL is slow: a round there takes seconds.
const ROUNDS: Record<Variant['name'], number> = { sqlite: 6, postgres: 4, mysql: 2 };
const JOBS = (round: number) => [['serve'], ['staff', 'create', '--name', `op${round}`, '--role', 'admin'], ['edge', 'key', 'list'], ['serve']];

type Answer = { ok: boolean; error?: string };
let children: ChildProcess[] = [];

function ask(child: ChildProcess, request: StartupRequest): Promise<Answer> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Answer));
    child.send(request);
  });
}

before(async () => {
  children = await Promise.all(
    JOBS(0).map(
      () =>
        new Promise<ChildProcess>((resolve, reject) => {
          const child = fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
          child.once('message', () => resolve(child));
          child.once('exit', (code) => reject(new Error(`start-up child exited with ${code}`)));
        }),
    ),
  );
});

after(() => {
  for (const child of children) child.kill();
});

for (const v of variants()) {
  test(`processes started together on a fresh database all start [${v.name}]`, { timeout: 60_000 }, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS[v.name]; round++) {
      const dataDir = tempDir('napi-startup-');
      const databases = ['account', 'gateway', 'edge'].map((d) => freshDatabase(v, path.join(dataDir, `${d}.sqlite`)));
      const [account, gateway, edge] = databases.map((d) => d.url);
      const env = { DATA_DIR: dataDir, SERVICES: 'account,gateway,edge', LOG_LEVEL: 'error', ACCOUNT_DATABASE_URL: account, GATEWAY_DATABASE_URL: gateway, EDGE_DATABASE_URL: edge };
      try {
        const answers = await Promise.all(children.map((child, i) => ask(child, { env, argv: JOBS(round)[i] })));
        failures.push(...answers.filter((a) => !a.ok).map((a) => `round ${round}: ${a.error}`));
        const database = await openDatabase<any>(gateway);
        try {
          const staff = await database.db.selectFrom('staff').select('name').execute();
          assert.deepEqual(staff.map((s) => s.name), answers[1].ok ? [`op${round}`] : []);
        } finally {
          await database.close();
        }
      } finally {
        await Promise.all(databases.map((d) => d.drop()));
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
    assert.deepEqual(failures, []);
  });
}
