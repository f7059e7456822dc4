import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type http from 'node:http';
import type { EdgeServer } from './edge.js';
import type { FakeUpstream, Seen } from './fake-upstream.js';

/** An owner's wallet as stored (integer units). */
export async function walletOf(s: EdgeServer, owner: string) {
  const w = await s.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').select(['wallet_id', 'balance', 'reserved', 'revision']).where('name', '=', owner).executeTakeFirstOrThrow();
  return { walletId: w.wallet_id, balance: Number(w.balance), reserved: Number(w.reserved), revision: Number(w.revision) };
}

export async function ownerIdOf(s: EdgeServer, owner: string): Promise<number> {
  return Number((await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', owner).executeTakeFirstOrThrow()).id);
}

export const runRow = (s: EdgeServer, runId: string) => s.ctx.db.selectFrom('edge_runs').selectAll().where('run_id', '=', runId).executeTakeFirstOrThrow();
export const settlementsOf = (s: EdgeServer, runId: string) => s.ctx.db.selectFrom('edge_settlements').selectAll().where('run_id', '=', runId).execute();

/** Every outbox event naming the run (its own, its wallet's, its billing resolution's), in sequence order, payloads parsed. */
export async function eventsOfRun(s: EdgeServer, runId: string) {
  const rows = await s.ctx.db.selectFrom('edge_outbox').selectAll().where('payload', 'like', `%${runId}%`).orderBy('sequence').execute();
  return rows.map((e) => ({ ...e, sequence: Number(e.sequence), aggregate_revision: Number(e.aggregate_revision), data: JSON.parse(e.payload) }));
}

/** SPEC's admission (E01 with {publicModelId, input} and an Idempotency-Key): 202 reserved. */
export async function admit(s: EdgeServer, token: string, publicModelId: string, input = 'hello') {
  const r = await s.respond(token, { publicModelId, input }, { 'idempotency-key': crypto.randomUUID() });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.status, 'reserved');
  return r.json as { requestId: string; runId: string; status: 'reserved'; createdAt: string };
}

/** Waits until `check` holds (polling), failing after `ms`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `p`, or a failure naming `what` after `ms` (a wait that would otherwise hang the suite). */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`gave up waiting: ${what}`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

const chunk = (content: string | null, finish: string | null = null) => ({ id: 'chatcmpl-g', object: 'chat.completion.chunk', created: 1, model: 'slow-model', choices: [{ index: 0, delta: content === null ? {} : { role: 'assistant', content }, finish_reason: finish }] });
export const SLOW_USAGE = { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 };

/**
 * Makes the fake upstream's `slow-model` wait for the test: a Responses request is held open until the
 * caller goes away (or `release()`), a chat stream sends its first chunk and finishes after `release()`.
 * Other models keep their answers. `closed` counts held requests whose connection the gateway closed.
 */
export function gateSlowModel(up: FakeUpstream) {
  let g = gate();
  const state = { held: 0, closed: 0 };
  const chat = up.routes['POST /v1/chat/completions']!;
  const responses = up.routes['POST /v1/responses']!;
  const hold = (res: http.ServerResponse, then: () => void) => {
    state.held++;
    const mine = g.opened;
    res.on('close', () => {
      if (!res.writableEnded) state.closed++;
    });
    void mine.then(() => {
      if (!res.destroyed && !res.writableEnded) then();
    });
  };
  up.routes['POST /v1/chat/completions'] = (r: Seen, res: http.ServerResponse) => {
    if (r.json?.model !== 'slow-model') return chat(r, res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk('first'))}\n\n`);
    hold(res, () => {
      for (const c of [chunk(' last'), chunk(null, 'stop'), { ...chunk(null), choices: [], usage: SLOW_USAGE }]) res.write(`data: ${JSON.stringify(c)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  };
  up.routes['POST /v1/responses'] = (r: Seen, res: http.ServerResponse) => {
    if (r.json?.model !== 'slow-model') return responses(r, res);
    hold(res, () => void responses(r, res));
  };
  return {
    state,
    /** Lets every held request finish; later ones are held again. */
    release() {
      g.open();
      g = gate();
    },
  };
}
