import type { OperationImpl } from '../../contract/types.js';
import type { GatewayContext } from '../context.js';
import type { ChannelService } from './service.js';

/** Tag operations, abilities repair and multi-key management. */
export function channelMoreRoutes(_ctx: GatewayContext, _channels: ChannelService): OperationImpl<any>[] {
  return [];
}
