import { AppError } from '../../kit/http/errors.js';
import { parseJson } from '../../kit/upstream/client.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { excerpt } from '../../kit/upstream/scrub.js';
import { audit, audited, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import type { GatewayContext } from '../context.js';
import { providerOf } from '../providers/index.js';
import { ollama } from '../providers/ollama/index.js';
import { ollamaHeaders } from '../providers/ollama/api.js';
import { expectOk, okJson, send, upstreamAppError, upstreamMessage } from '../upstream/http.js';
import type { UpstreamTarget } from '../upstream/target.js';

/** Largest stream of progress lines read from one pull. */
const STREAM_MAX_BYTES = 64 * 1024 * 1024;

/** One event of a streamed pull: a progress line as Ollama sends it, or the final outcome. */
export type PullEvent = { status: string; digest?: string; total?: number; completed?: number } | { success: true; message: string } | { success: false; error: string; message: string };

/** Ollama's local-model management on an Ollama channel (G22–G25). */
export class LocalModelService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
  ) {}

  private get config() {
    return this.ctx.config.gateway.ollama;
  }

  /** The channel's target; 400 CHANNEL_NOT_OLLAMA for other types. */
  async target(id: number): Promise<UpstreamTarget> {
    const t = await this.channels.target(id);
    if (providerOf(t.type) !== ollama) throw new AppError('CHANNEL_NOT_OLLAMA');
    return t;
  }

  private headers(t: UpstreamTarget) {
    return { ...ollamaHeaders(t), 'content-type': 'application/json' };
  }

  /** G22: DELETE {base}/api/delete. */
  async remove(actor: Actor, channelId: number, model: string) {
    const t = await this.target(channelId);
    await audited(this.ctx.db, actor, 'G22', channelId, { model_name: model }, async () => {
      expectOk(await send(this.ctx.upstream, t, { url: `${t.baseUrl}/api/delete`, method: 'DELETE', headers: this.headers(t), body: JSON.stringify({ model, name: model }) }), t);
    });
  }

  /** G23: POST {base}/api/pull without streaming; waits for the whole pull (GATEWAY_OLLAMA_PULL_TIMEOUT_MS). */
  async pull(actor: Actor, channelId: number, model: string) {
    const t = await this.target(channelId);
    await audited(this.ctx.db, actor, 'G23', channelId, { model_name: model }, async () => {
      const res = await send(this.ctx.upstream, t, { url: `${t.baseUrl}/api/pull`, method: 'POST', headers: this.headers(t), body: JSON.stringify({ model, stream: false }), timeoutMs: this.config.pullTimeoutMs });
      const body = okJson<{ status?: unknown; error?: unknown }>(res, t);
      if (typeof body.error === 'string') throw new AppError('UPSTREAM_BAD_RESPONSE', { params: { detail: upstreamMessage(res.text, t) } });
    });
  }

  /** G25: GET {base}/api/version. */
  async version(actor: Actor, channelId: number): Promise<string> {
    const t = await this.target(channelId);
    return audited(this.ctx.db, actor, 'G25', channelId, {}, async () => {
      const body = okJson<{ version?: unknown }>(await send(this.ctx.upstream, t, { url: `${t.baseUrl}/api/version`, headers: ollamaHeaders(t) }), t);
      if (typeof body.version !== 'string') throw new AppError('UPSTREAM_BAD_RESPONSE', { params: { detail: 'no version in the answer' } });
      return body.version;
    });
  }

  /**
   * G24: opens the streamed pull (failures up to here are ordinary errors) and returns its events: each
   * progress line, then one final success or error event. `signal` (the client leaving) aborts the upstream.
   */
  async pullStream(actor: Actor, channelId: number, model: string, signal: AbortSignal): Promise<AsyncGenerator<PullEvent>> {
    const t = await this.target(channelId);
    let stream;
    try {
      stream = await this.ctx.upstream.stream({
        url: `${t.baseUrl}/api/pull`,
        method: 'POST',
        headers: { ...this.headers(t), ...t.headers },
        body: JSON.stringify({ model, stream: true }),
        proxy: t.proxy,
        timeoutMs: this.config.streamTimeoutMs,
        idleMs: this.config.streamIdleMs,
        maxBytes: STREAM_MAX_BYTES,
        signal,
      });
    } catch (e) {
      throw upstreamAppError(e, t);
    }
    if (stream.status < 200 || stream.status >= 300) {
      const text = await stream.text().catch(() => '');
      await audit(this.ctx.db, actor, 'G24', channelId, { model_name: model, failed: 'UPSTREAM_BAD_STATUS' });
      throw new AppError('UPSTREAM_BAD_STATUS', { params: { status: stream.status, detail: upstreamMessage(text, t) }, data: { upstream_status: stream.status } });
    }
    const ctx = this.ctx;
    return (async function* events(): AsyncGenerator<PullEvent> {
      let final: PullEvent = { success: false, error: 'incomplete', message: 'the pull stream ended before the pull finished' };
      try {
        for await (const line of stream.lines()) {
          if (!line.trim()) continue;
          const v = parseJson(line) as { status?: unknown; digest?: unknown; total?: unknown; completed?: unknown; error?: unknown } | undefined;
          if (!v || typeof v !== 'object') {
            final = { success: false, error: 'bad_response', message: 'a progress line is not JSON: ' + excerpt(line, t.secrets, 80) };
            break;
          }
          if (typeof v.error === 'string') {
            final = { success: false, error: excerpt(v.error, t.secrets), message: `Failed to pull model ${model}` };
            break;
          }
          const status = typeof v.status === 'string' ? excerpt(v.status, t.secrets, 200) : '';
          yield {
            status,
            ...(typeof v.digest === 'string' ? { digest: v.digest.slice(0, 100) } : {}),
            ...(typeof v.total === 'number' ? { total: v.total } : {}),
            ...(typeof v.completed === 'number' ? { completed: v.completed } : {}),
          };
          if (status === 'success') {
            final = { success: true, message: `Model ${model} pulled successfully` };
            break;
          }
        }
      } catch (e) {
        const detail = e instanceof UpstreamError ? excerpt(e.detail, t.secrets) : 'the stream failed';
        final = { success: false, error: e instanceof UpstreamError ? e.kind : 'error', message: `Failed to pull model ${model}: ${detail}` };
      } finally {
        stream.close();
      }
      await audit(ctx.db, actor, 'G24', channelId, { model_name: model, ...(final.success ? { ok: true } : { failed: (final as { error: string }).error }) }).catch(() => {});
      yield final;
    })();
  }
}
