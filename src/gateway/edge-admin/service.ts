import { EdgeAdminRefusal, edgeOwnerIdOf, type EdgeActor, type EdgeAdminHolder, type EdgeAdminPort } from '../../contract/edge-admin.js';
import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';
import { audit, type Actor } from '../audit/store.js';
import type { Db } from '../channels/store.js';

const REFUSAL_CODE: Record<EdgeAdminRefusal['reason'], string> = { invalid: 'EDGE_ADMIN_INVALID', not_found: 'EDGE_OWNER_NOT_FOUND', conflict: 'IDEMPOTENCY_KEY_REUSED' };

/**
 * The edge's administration as the gateway's staff see it: the edge's port when the edge runs in this
 * process (main.ts fills the holder after building it), GW_EDGE_NOT_SERVED otherwise. Every write is
 * audited with the staff member; keys and signing secrets never reach the audit log.
 */
export class EdgeAdminService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly holder: EdgeAdminHolder,
  ) {}

  get served() {
    return this.holder.port !== null;
  }

  /**
   * The owner names of relay callers that are edge owners (`edge:owner-<id>` → its name), when the edge runs
   * in this process; other callers, and every caller without the edge, are left out.
   */
  async callerNames(callers: string[]): Promise<Map<string, string>> {
    const port = this.holder.port;
    const ids = [...new Set(callers.map(edgeOwnerIdOf).filter((id): id is number => id !== null))];
    if (!port || ids.length === 0) return new Map();
    const names = await port.ownerNames(ids);
    return new Map(callers.flatMap((c) => (names.has(edgeOwnerIdOf(c)!) ? [[c, names.get(edgeOwnerIdOf(c)!)!] as const] : [])));
  }

  /** Runs `fn` on the edge's port; the edge's refusals become catalog codes. */
  async read<T>(fn: (port: EdgeAdminPort) => Promise<T> | T): Promise<T> {
    const port = this.holder.port;
    if (!port) throw new AppError('GW_EDGE_NOT_SERVED');
    try {
      return await fn(port);
    } catch (e) {
      if (e instanceof EdgeAdminRefusal) throw new AppError(REFUSAL_CODE[e.reason], { params: { detail: e.detail } });
      throw e;
    }
  }

  /**
   * A write: run on the edge (which records it in its own audit log as `staff:<name>`), then recorded as `operation` with `detail` and what `describe` tells of the
   * result (never a secret), or with the failure's code. `trx`: the gateway transaction to record it in.
   */
  async write<T>(
    actor: Actor,
    operation: string,
    detail: Record<string, unknown>,
    fn: (port: EdgeAdminPort, by: EdgeActor) => Promise<T>,
    describe: (result: T) => Record<string, unknown> = () => ({}),
    trx?: Db,
  ): Promise<T> {
    const db = trx ?? this.ctx.db;
    try {
      const result = await this.read((port) => fn(port, `staff:${actor.name}`));
      await audit(db, actor, operation, null, { ...detail, ok: true, ...describe(result) });
      return result;
    } catch (e) {
      // A refusal is recorded too; "not served" changed nothing and is not.
      if (!(e instanceof AppError && e.code === 'GW_EDGE_NOT_SERVED')) await audit(db, actor, operation, null, { ...detail, failed: e instanceof AppError ? e.code : 'error' });
      throw e;
    }
  }
}
