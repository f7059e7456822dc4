/**
 * The floor of the edge bench's admission (bench/edge.ts), in its own process: E01's admission written by
 * hand on node:http and the driver the edge uses, on a database of its own made from the edge's migrations
 * (BENCH_FLOOR_DATABASE_URL: sqlite:///file, opened with the pragmas of src/kit/db's openDatabase and its WAL
 * checkpointed by the same WalCheckpointer, or
 * postgres://…?schema=NAME, a pg Pool of 10 like the edge's). Per `POST /v1/responses` with
 * `Authorization: Bearer svc_sk_<keyId>.<secret>`, an Idempotency-Key and SPEC's body {publicModelId, input}:
 * the key looked up by id and its secret's SHA-256 compared (what any server must do to know the owner), then
 * one transaction: insert the idempotency row, check the model, reserve its amount with one conditional
 * UPDATE … RETURNING, insert the run, insert run.created@2.0 and wallet.reserved@2.0 with a delivery for each
 * of the owner's webhook endpoints, commit; 202 with the same JSON as the edge. A key used again is answered
 * from its row (Idempotent-Replayed) or 409. No request log, request id hook, metrics, schema layer or
 * rate limit. Reports {url} over IPC; stops on "stop" or when the parent goes away.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';
// Started with tsx (bench/edge.ts): the edge's own WAL checkpointer, so both commit alike.
import { CHECKPOINT_DEFAULTS, WalCheckpointer } from '../src/kit/db/checkpoint.ts';

const url = process.env.BENCH_FLOOR_DATABASE_URL;
if (!url) throw new Error('BENCH_FLOOR_DATABASE_URL is required');
const TTL_MS = 3600 * 1000;
const BEARER = /^Bearer (svc_sk_([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43}))$/;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const SQL = {
  key: 'select owner_id, secret_hash, revoked_at from edge_keys where key_id = $1',
  idempotency: 'insert into edge_idempotency (owner_id, key, body_hash, response, created_at) values ($1, $2, $3, $4, $5)',
  stored: 'select body_hash, response from edge_idempotency where owner_id = $1 and key = $2',
  model: 'select public_model_id, reserve_amount, enabled from edge_models where public_model_id = $1',
  reserve:
    'update edge_wallets set reserved = reserved + $1, revision = revision + 1, updated_at = $2 where owner_id = $3 and balance - reserved >= $1 ' +
    'returning wallet_id, balance, reserved, revision',
  run:
    'insert into edge_runs (run_id, request_id, owner_id, key_id, public_model_id, input, api_version, reserved_amount, status, revision, traceparent, created_at, kind, format, deadline_at) ' +
    "values ($1, $2, $3, $4, $5, $6, 'v1', $7, 'reserved', 1, null, $8, 'async', 'responses', $9)",
  event: 'insert into edge_outbox (event_id, type, aggregate_id, aggregate_revision, owner_id, payload, traceparent, created_at) values ($1, $2, $3, $4, $5, $6, null, $7)',
  endpoints: 'select endpoint_id from edge_webhooks where owner_id = $1 and removed_at is null',
  delivery: "insert into edge_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at, created_at) values ($1, $2, 'pending', 0, $3, $3)",
};

class Refusal extends Error {
  constructor(status, code) {
    super(code);
    this.status = status;
    this.code = code;
  }
}

/** The rows the transaction writes after the idempotency row, as parameter lists (the same values on both drivers). */
function admissionRows(a, wallet, model, now) {
  const amount = Number(model.reserve_amount);
  const createdAt = new Date(now).toISOString();
  const runCreated = { runId: a.runId, requestId: a.requestId, publicModelId: model.public_model_id, apiVersion: 'v1', kind: 'async', status: 'reserved', reservedAmount: amount, createdAt };
  const balance = Number(wallet.balance);
  const reserved = Number(wallet.reserved);
  const walletReserved = { walletId: wallet.wallet_id, runId: a.runId, amount, balance, reserved, available: balance - reserved };
  return {
    run: [a.runId, a.requestId, a.ownerId, a.keyId, model.public_model_id, a.input, amount, now, now + TTL_MS],
    events: [
      [crypto.randomUUID(), 'run.created@2.0', a.runId, 1, a.ownerId, JSON.stringify(runCreated), now],
      [crypto.randomUUID(), 'wallet.reserved@2.0', wallet.wallet_id, Number(wallet.revision), a.ownerId, JSON.stringify(walletReserved), now],
    ],
  };
}

/** One driver: the key lookup, the admission transaction and the replay read. */
function sqliteStore(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  new WalCheckpointer(db, file, CHECKPOINT_DEFAULTS, 5000);
  // $n → ?, each call's values put in the order the placeholders appear (better-sqlite3 binds ? by position).
  const s = Object.fromEntries(
    Object.entries(SQL).map(([k, text]) => {
      const stmt = db.prepare(text.replace(/\$\d+/g, '?'));
      const order = [...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1);
      const inOrder = order.every((n, i) => n === i);
      const bind = inOrder ? (v) => v : (v) => order.map((i) => v[i]);
      return [k, { run: (...v) => stmt.run(...bind(v)), get: (...v) => stmt.get(...bind(v)), all: (...v) => stmt.all(...bind(v)) }];
    }),
  );
  const admit = db.transaction((a) => {
    s.idempotency.run(a.ownerId, a.key, a.bodyHash, a.response, Math.floor(a.now / 1000));
    const model = s.model.get(a.publicModelId);
    if (!model || !model.enabled) throw new Refusal(400, 'model_not_found');
    const wallet = s.reserve.get(Number(model.reserve_amount), Math.floor(a.now / 1000), a.ownerId);
    if (!wallet) throw new Refusal(402, 'insufficient_balance');
    const rows = admissionRows(a, wallet, model, a.now);
    s.run.run(...rows.run);
    const endpoints = s.endpoints.all(a.ownerId);
    for (const e of rows.events) {
      s.event.run(...e);
      for (const w of endpoints) s.delivery.run(e[0], w.endpoint_id, a.now);
    }
  });
  return {
    keyOf: async (keyId) => s.key.get(keyId),
    admit: async (a) => admit(a),
    stored: async (ownerId, key) => s.stored.get(ownerId, key),
    unique: (e) => e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE',
  };
}

function postgresStore(connection) {
  const u = new URL(connection);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: u.toString(), max: 10, ...(schema ? { options: `-c search_path="${schema}"` } : {}) });
  pg.types.setTypeParser(20, (v) => Number(v));
  pool.on('error', () => {});
  // Named statements: each connection parses a query once.
  const q = (c, name, values) => c.query({ name, text: SQL[name], values });
  return {
    keyOf: async (keyId) => (await q(pool, 'key', [keyId])).rows[0],
    admit: async (a) => {
      const c = await pool.connect();
      try {
        await c.query('begin');
        await q(c, 'idempotency', [a.ownerId, a.key, a.bodyHash, a.response, Math.floor(a.now / 1000)]);
        const model = (await q(c, 'model', [a.publicModelId])).rows[0];
        if (!model || !model.enabled) throw new Refusal(400, 'model_not_found');
        const wallet = (await q(c, 'reserve', [Number(model.reserve_amount), Math.floor(a.now / 1000), a.ownerId])).rows[0];
        if (!wallet) throw new Refusal(402, 'insufficient_balance');
        const rows = admissionRows(a, wallet, model, a.now);
        await q(c, 'run', rows.run);
        const endpoints = (await q(c, 'endpoints', [a.ownerId])).rows;
        for (const e of rows.events) {
          await q(c, 'event', e);
          for (const w of endpoints) await q(c, 'delivery', [e[0], w.endpoint_id, a.now]);
        }
        await c.query('commit');
      } catch (e) {
        await c.query('rollback').catch(() => {});
        throw e;
      } finally {
        c.release();
      }
    },
    stored: async (ownerId, key) => (await q(pool, 'stored', [ownerId, key])).rows[0],
    unique: (e) => e?.code === '23505',
  };
}

const store = url.startsWith('sqlite://') ? sqliteStore(url.slice('sqlite://'.length)) : postgresStore(url);

function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function admission(req, raw) {
  const bearer = BEARER.exec(req.headers.authorization ?? '');
  if (!bearer) throw new Refusal(401, 'invalid_api_key');
  const key = await store.keyOf(bearer[2]);
  const given = crypto.createHash('sha256').update(bearer[3]).digest();
  if (!key || key.revoked_at !== null || !crypto.timingSafeEqual(given, Buffer.from(key.secret_hash, 'hex'))) throw new Refusal(401, 'invalid_api_key');
  const idempotencyKey = req.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey)) throw new Refusal(400, 'idempotency_key_required');
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new Refusal(400, 'invalid_request_body');
  }
  if (typeof body?.publicModelId !== 'string' || typeof body.input !== 'string' || Object.keys(body).length !== 2) throw new Refusal(400, 'invalid_request_body');
  const bodyHash = crypto.createHash('sha256').update(JSON.stringify({ input: body.input, publicModelId: body.publicModelId })).digest('hex');
  const now = Date.now();
  const answer = { requestId: crypto.randomUUID(), runId: crypto.randomUUID(), status: 'reserved', createdAt: new Date(now).toISOString() };
  const ownerId = Number(key.owner_id);
  const a = { ...answer, ownerId, keyId: bearer[2], key: idempotencyKey, bodyHash, response: JSON.stringify(answer), publicModelId: body.publicModelId, input: body.input, now };
  try {
    await store.admit(a);
    return { answer, replayed: false };
  } catch (e) {
    if (!store.unique(e)) throw e;
    const first = await store.stored(ownerId, idempotencyKey);
    if (!first) throw e;
    if (first.body_hash !== bodyHash) throw new Refusal(409, 'idempotency_key_conflict');
    return { answer: JSON.parse(first.response), replayed: true };
  }
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/responses') return send(res, 404, { error: { code: 'not_found' } });
    admission(req, Buffer.concat(parts).toString('utf8')).then(
      ({ answer, replayed }) => send(res, 202, answer, replayed ? { 'idempotent-replayed': 'true' } : {}),
      (e) => (e instanceof Refusal ? send(res, e.status, { error: { code: e.code } }) : send(res, 500, { error: { code: 'internal_error', message: String(e?.message ?? e) } })),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (m) => m === 'stop' && process.exit(0));
process.on('disconnect', () => process.exit(0));
