import { AppError } from '../../kit/http/errors.js';
import { audited, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import { CHANNEL_TYPES, MAX_TYPE } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import { outcomeOfError } from '../metrics.js';
import { providerOf } from '../providers/index.js';
import { inputTarget, type UpstreamTarget } from '../upstream/target.js';

export interface FetchModelsInput {
  type: number;
  base_url?: string | null;
  key: string;
}

/** Model discovery: what an upstream offers, for unsaved credentials (G16) or a stored channel (G17). */
export class ModelService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
  ) {}

  /** The upstream's model ids for a target (its provider's list call). */
  async list(t: UpstreamTarget): Promise<string[]> {
    const provider = providerOf(t.type);
    try {
      const models = await provider.listModels(this.ctx, t);
      this.ctx.metrics.upstreamCall('models', provider.name, 'ok');
      return models;
    } catch (e) {
      this.ctx.metrics.upstreamCall('models', provider.name, outcomeOfError(e));
      throw e;
    }
  }

  /** G16: credentials from the request, nothing stored; the base URL defaults to the type's. */
  async fetchForInput(actor: Actor, input: FetchModelsInput): Promise<string[]> {
    if (!Number.isInteger(input.type) || input.type < 0 || input.type > MAX_TYPE) throw new AppError('CHANNEL_INVALID', { params: { detail: `type must be 0..${MAX_TYPE}` } });
    const t = inputTarget(input);
    if (!t.baseUrl) throw new AppError('CHANNEL_INVALID', { params: { detail: `base_url is required for type ${CHANNEL_TYPES[input.type]?.name ?? input.type}` } });
    return this.auditedList(actor, 'G16', null, t);
  }

  /** G17: a stored channel's upstream (its first enabled key). */
  async fetchForChannel(actor: Actor, id: number): Promise<string[]> {
    const t = await this.channels.target(id);
    if (!t.baseUrl) throw new AppError('CHANNEL_INVALID', { params: { detail: 'the channel has no base_url and its type has no default' } });
    return this.auditedList(actor, 'G17', id, t);
  }


  /** Lists and records the attempt, failed or not (the count, or the failure's code). */
  private async auditedList(actor: Actor, operation: string, channelId: number | null, t: UpstreamTarget) {
    return audited(this.ctx.db, actor, operation, channelId, { type: t.type }, () => this.list(t), (models) => ({ count: models.length }));
  }
}
