import type { FastifyRequest } from 'fastify';
import { sha256 } from '../kit/crypto/tokens.js';
import { canonicalJson } from '../kit/json/canonical.js';
import { isUniqueViolation } from '../kit/db/index.js';
import { AppError } from '../kit/http/errors.js';
import type { GatewayContext } from './context.js';
import { nowSeconds } from './db.js';
import type { Db } from './channels/store.js';

/**
 * Runs a creating operation at most once per (identity, operation, Idempotency-Key): the key row is
 * written in the same transaction as the creation, so a replay with the same body returns the stored
 * result and a different body answers 409. Without the header the operation simply runs.
 */
export async function once<T>(ctx: GatewayContext, req: FastifyRequest, actorId: number, operation: string, run: (trx: Db) => Promise<T>): Promise<T> {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return ctx.db.transaction().execute(run);
  if (typeof header !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(header)) throw new AppError('IDEMPOTENCY_KEY_INVALID');
  // Key order and whitespace are not part of a request: the same fields in another order are the same body.
  const bodyHash = sha256(canonicalJson({ body: req.body ?? null, query: req.query ?? null, params: req.params ?? null }));
  const where = { actor_id: actorId, operation, key: header };
  // Every expired key goes (this one included, so it may be used again): the table holds one TTL of keys.
  await ctx.db.deleteFrom('idempotency_keys').where('created_at', '<', nowSeconds() - ctx.config.gateway.idempotencyTtlSeconds).execute();
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      await trx.insertInto('idempotency_keys').values({ ...where, body_hash: bodyHash, response: null, created_at: nowSeconds() }).execute();
      const result = await run(trx);
      await trx
        .updateTable('idempotency_keys')
        .set({ response: JSON.stringify(result) })
        .where('actor_id', '=', actorId)
        .where('operation', '=', operation)
        .where('key', '=', header)
        .execute();
      return result;
    });
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const first = await ctx.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('actor_id', '=', actorId)
      .where('operation', '=', operation)
      .where('key', '=', header)
      .executeTakeFirst();
    if (!first || first.body_hash !== bodyHash || first.response === null) throw new AppError('IDEMPOTENCY_KEY_REUSED');
    return JSON.parse(first.response) as T;
  }
}
