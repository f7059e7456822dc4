// Worker thread of checkpoint.ts: its own connection to a SQLite file in WAL mode, checkpointing it so the
// connection that commits never does. Plain JavaScript so it starts without a loader.
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require('better-sqlite3');

const { file, intervalMs, restartBytes, idleMs } = workerData;
const db = new SQLite(file, { fileMustExist: true });
// Only PASSIVE checkpoints here: RESTART and TRUNCATE take the writer lock, and a transaction of the main
// connection that read before it writes fails at once (SQLITE_BUSY, no busy wait) when another connection
// holds it. So those run on the main connection, between two of its tasks, when this thread asks.
db.pragma('wal_autocheckpoint = 0');
const restartFrames = Math.max(1, Math.floor(restartBytes / db.pragma('page_size', { simple: true })));

/** Frames in the WAL after copying what it could into the database (-1 when another checkpoint was running). */
function passive() {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0].log;
  } catch (e) {
    if (String(e && e.code).startsWith('SQLITE_BUSY')) return -1;
    throw e;
  }
}

let lastLog = -1;
let changedAt = Date.now();
let behind = false;

// PASSIVE copies what the WAL holds into the database without holding up anyone. Under steady writes the
// WAL never gets back to its start by itself (that takes a write beginning when every frame is copied), so
// past restartBytes the main thread is asked for a RESTART (it copies the frames committed since this
// PASSIVE). Should the WAL pass twice restartBytes all the same, the main thread is told it is behind: its
// commits checkpoint again until the WAL is back under restartBytes. A WAL idle for idleMs is truncated.
function tick() {
  const now = Date.now();
  const log = passive();
  if (log < 0) return;
  const committed = log !== lastLog;
  if (committed) {
    lastLog = log;
    changedAt = now;
  }
  if (log >= restartFrames && committed) {
    if (log >= 2 * restartFrames && !behind) tell('behind');
    else parentPort.postMessage('restart');
  } else if (log < restartFrames && behind) tell('caught-up');
  if (log > 0 && !committed && now - changedAt >= idleMs) {
    parentPort.postMessage('truncate');
    changedAt = now;
  }
}

function tell(state) {
  behind = state === 'behind';
  parentPort.postMessage(state);
}

const timer = setInterval(tick, intervalMs);

parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  // The last copy; the main connection, closing last, empties the WAL.
  passive();
  db.close();
  parentPort.close();
});
