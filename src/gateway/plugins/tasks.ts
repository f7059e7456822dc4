import type { FastifyReply, FastifyRequest } from 'fastify';
import { locksRows } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import type { GatewayContext } from '../context.js';
import type { PluginTaskStatus, TaskPluginTaskTable } from '../db.js';
import type { PluginPackage } from './loader.js';
import type { PluginRoute } from './manifest.js';
import { defaultEnabled, envelopeOf, type RouteRunner } from './runtime.js';
import { createTaskWithinBudget, enabledRow, IN_FLIGHT, taskById, updateInFlight } from './store.js';

const MAX_RESULT_BYTES = 1024 * 1024;
const MAX_DETAIL = 300;

/** What a task's owner (and the plugin) sees of a task record. */
export function taskView(t: TaskPluginTaskTable) {
  const parse = (s: string | null) => {
    if (s === null) return null;
    try {
      return JSON.parse(s);
    } catch {
      return null;
    }
  };
  return {
    task_id: t.task_id,
    plugin: t.plugin_key,
    version: t.plugin_version,
    status: t.status,
    input: parse(t.input),
    result: parse(t.result),
    error: t.error,
    created_at: Number(t.created_at),
    updated_at: Number(t.updated_at),
  };
}

function clip(s: string) {
  return s.length > MAX_DETAIL ? s.slice(0, MAX_DETAIL) + '…' : s;
}

/**
 * Runs plugin routes: enabled check before parsing, then (after the gateway authenticator) the budget
 * check and task creation, or the ownership check of :task_id, and only then the plugin's function. The
 * plugin gets the caller's identity, the validated fields and a handle on its own task; nothing else.
 */
export class TaskRunner implements RouteRunner {
  private readonly abort = new AbortController();

  constructor(private readonly ctx: GatewayContext) {}

  /** Background work of plugins stops when the gateway closes. */
  close() {
    this.abort.abort();
  }

  async gate(pkg: PluginPackage, _req: FastifyRequest) {
    const key = pkg.manifest.key;
    const enabled = (await enabledRow(this.ctx.db, key)) ?? defaultEnabled(pkg);
    if (!enabled) throw new AppError('TASK_PLUGIN_DISABLED', { params: { key } });
  }

  /** A task record the plugin may move along while it is in flight (also after the response). */
  private handle(pkg: PluginPackage, row: TaskPluginTaskTable) {
    const set = async (status: PluginTaskStatus, result?: unknown, error?: string) => {
      try {
        let text: string | null | undefined;
        if (result !== undefined) {
          text = JSON.stringify(result) ?? null;
          if (text && text.length > MAX_RESULT_BYTES) throw new Error(`task result larger than ${MAX_RESULT_BYTES} bytes`);
        }
        return await updateInFlight(this.ctx.db, row.task_id, status, text, error === undefined ? undefined : clip(String(error)));
      } catch (e) {
        this.ctx.log.warn({ plugin: pkg.manifest.key, task_id: row.task_id, error: (e as Error).name }, 'task plugin could not update its task');
        return false;
      }
    };
    return {
      ...taskView(row),
      running: () => set('running'),
      succeed: (result?: unknown) => set('succeeded', result ?? null),
      fail: (message: string) => set('failed', undefined, message),
    };
  }

  private async ownedTask(pkg: PluginPackage, req: FastifyRequest) {
    const identity = staffOf(req);
    const taskId = String((req.params as Record<string, unknown>).task_id ?? '');
    const row = taskId ? await taskById(this.ctx.db, taskId) : undefined;
    // Another identity's task is "not found", so ids of others cannot be probed.
    if (!row || row.plugin_key !== pkg.manifest.key || (Number(row.owner_id) !== identity.id && identity.role !== 'root')) {
      throw new AppError('TASK_PLUGIN_TASK_NOT_FOUND');
    }
    return row as TaskPluginTaskTable;
  }

  private failure(pkg: PluginPackage, route: PluginRoute, e: unknown): AppError {
    if (e instanceof AppError && e.code === 'TASK_PLUGIN_REJECTED') return e;
    this.ctx.log.warn({ plugin: pkg.manifest.key, version: pkg.manifest.version, route: `${route.method} ${route.path}`, error: (e as Error)?.name ?? typeof e }, 'task plugin handler failed');
    return new AppError('TASK_PLUGIN_FAILED', { params: { key: pkg.manifest.key } });
  }

  async run(pkg: PluginPackage, route: PluginRoute, req: FastifyRequest, _reply: FastifyReply) {
    const identity = staffOf(req);
    const fn = pkg.module?.[route.handler] as ((c: unknown) => unknown) | undefined;
    if (!fn) throw new AppError('TASK_PLUGIN_FAILED', { params: { key: pkg.manifest.key } });
    const base = {
      plugin: { key: pkg.manifest.key, version: pkg.manifest.version },
      identity: { id: identity.id, name: identity.name, kind: identity.kind, role: identity.role },
      params: { ...(req.params as object) },
      query: { ...(req.query as object) },
      body: req.body && typeof req.body === 'object' ? { ...(req.body as object) } : {},
      signal: this.abort.signal,
      reject: (detail: string): never => {
        throw new AppError('TASK_PLUGIN_REJECTED', { params: { detail: clip(String(detail)) } });
      },
    };
    const task = route.task ?? 'none';
    if (task === 'create') {
      const limit = this.ctx.config.gateway.pluginMaxInFlight;
      const row = await createTaskWithinBudget(
        this.ctx.db,
        locksRows(this.ctx.database.dialect),
        { plugin_key: pkg.manifest.key, plugin_version: pkg.manifest.version, owner_id: identity.id, owner_name: identity.name, input: JSON.stringify(base.body) },
        limit,
      );
      if (!row) throw new AppError('TASK_PLUGIN_BUDGET_EXCEEDED', { params: { limit } });
      let out: unknown;
      try {
        out = await fn({ ...base, task: this.handle(pkg, row) });
      } catch (e) {
        await updateInFlight(this.ctx.db, row.task_id, 'failed', undefined, e instanceof AppError ? e.code : 'plugin handler failed');
        throw this.failure(pkg, route, e);
      }
      return envelopeOf(out, taskView((await taskById(this.ctx.db, row.task_id)) as TaskPluginTaskTable));
    }
    if (task === 'read' || task === 'cancel') {
      const row = await this.ownedTask(pkg, req);
      if (task === 'cancel' && !IN_FLIGHT.includes(row.status)) throw new AppError('TASK_PLUGIN_TASK_FINISHED', { params: { status: row.status } });
      let out: unknown;
      try {
        out = await fn({ ...base, task: task === 'cancel' ? this.handle(pkg, row) : taskView(row) });
      } catch (e) {
        throw this.failure(pkg, route, e);
      }
      if (task === 'cancel') await updateInFlight(this.ctx.db, row.task_id, 'cancelled', undefined, `cancelled by ${identity.name}`);
      return envelopeOf(out, taskView((await taskById(this.ctx.db, row.task_id)) as TaskPluginTaskTable));
    }
    try {
      const out = await fn(base);
      return ok(out === undefined ? null : out);
    } catch (e) {
      throw this.failure(pkg, route, e);
    }
  }
}
