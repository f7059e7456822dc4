// Worker thread of checkpoint.ts: its own connection to a SQLite file in WAL mode, checkpointing it so the
// connection that commits never does. Plain JavaScript so it starts without a loader.
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require('better-sqlite3');

const { file, intervalMs, restartBytes } = workerData;
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

// The main connection checkpoints by itself until the first tick finds the WAL under restartBytes.
let behind = true;
/** A RESTART was asked and the main thread has not answered yet: asked twice, it would copy the frames since the first. */
let restartAsked = false;

/** Frames a PASSIVE leaves for the main connection's RESTART to copy at most, when it can. */
const RESTART_COPY_FRAMES = 64;

// PASSIVE copies what the WAL holds into the database without holding up anyone. A write that begins when
// every frame is copied starts the WAL over; under steady writes that moment never comes (frames arrive
// during each PASSIVE), so past restartBytes the main thread is asked for a RESTART, after PASSIVEs that
// leave it few frames to copy itself. Should the WAL pass twice restartBytes all the same, the main thread
// is told it is behind: its commits checkpoint again until the WAL is back under restartBytes.
function tick() {
  let log = passive();
  if (log < 0) return;
  if (log < restartFrames) {
    if (behind) tell('caught-up');
    return;
  }
  if (log >= 2 * restartFrames) {
    if (!behind) tell('behind');
    return;
  }
  if (restartAsked) return;
  for (let pass = 0; pass < 3; pass++) {
    const before = log;
    log = passive();
    if (log < 0 || log - before <= RESTART_COPY_FRAMES) break;
  }
  restartAsked = true;
  parentPort.postMessage('restart');
}

function tell(state) {
  behind = state === 'behind';
  parentPort.postMessage(state);
}

const timer = setInterval(tick, intervalMs);

parentPort.on('message', (m) => {
  if (m === 'restarted') restartAsked = false;
  if (m !== 'close') return;
  clearInterval(timer);
  // The last copy; the main connection, closing last, empties the WAL.
  passive();
  db.close();
  parentPort.close();
});
