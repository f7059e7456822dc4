// Worker thread of read-thread.ts: one read-only connection to a SQLite file, answering
// {id, sql, parameters} with {id, rows} or {id, error}. Plain JavaScript so it starts without a loader.
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require('better-sqlite3');

const db = new SQLite(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('query_only = ON');
if (workerData.cacheKib) db.pragma(`cache_size = -${Number(workerData.cacheKib)}`);

const STATEMENT_CACHE_SIZE = 200;
const statements = new Map();

function statement(sql) {
  let s = statements.get(sql);
  if (s) {
    statements.delete(sql);
  } else {
    s = db.prepare(sql);
    if (!s.reader) throw new Error('read thread: only statements that return rows');
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value);
  }
  statements.set(sql, s);
  return s;
}

/** Whether any value is a BLOB: it crosses as a Uint8Array and is turned back into a Buffer. */
function hasBlobs(rows) {
  for (const row of rows) for (const key in row) if (row[key] instanceof Uint8Array) return true;
  return false;
}

parentPort.on('message', ({ id, sql, parameters }) => {
  let reply;
  try {
    const rows = statement(sql).all(parameters);
    reply = { id, rows, blobs: hasBlobs(rows) };
  } catch (e) {
    reply = { id, error: { message: e instanceof Error ? e.message : String(e), code: e && e.code } };
  }
  parentPort.postMessage(reply);
});
