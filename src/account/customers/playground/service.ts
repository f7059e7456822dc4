import type { PlaygroundAnswer } from '../../../contract/customer.js';
import type { CancelSignal } from '../../../kit/http/cancel-signal.js';
import { AppError } from '../../../kit/http/errors.js';
import type { EdgeAccess } from '../edge.js';
import { DEFAULT_GROUP, type UserGroupOf } from '../pricing/service.js';

export interface PlaygroundRequest {
  /** The language of the edge's refusals. */
  lang: 'en' | 'zh';
  requestId: string;
  /** Aborts the call (the browser went away). */
  signal: CancelSignal;
}

/**
 * new-api's playground: the signed-in user's chat, made on the edge as any call and billed to their wallet
 * under the temporary token `playground-<group>`. new-api's `group` field may only name the user's own
 * group here (a user has one); it is not sent on.
 */
export function createPlaygroundService(edge: EdgeAccess, users: UserGroupOf, bodyLimit: number) {
  return {
    /** The largest chat body: the edge's (EDGE_MAX_REQUEST_BYTES), not this service's smaller default. */
    bodyLimit,

    async chat(userId: number, body: Record<string, unknown>, r: PlaygroundRequest): Promise<PlaygroundAnswer> {
      const { group: asked, ...chat } = body;
      const group = (await users.groupOf(userId)) || DEFAULT_GROUP;
      if (typeof asked === 'string' && asked !== '' && asked !== group) throw new AppError('PLAYGROUND_GROUP_DENIED', { params: { group: asked } });
      return edge.run((port) => port.playgroundChat({ userId, group, body: chat, requestId: r.requestId, lang: r.lang, signal: r.signal }));
    },
  };
}

export type PlaygroundService = ReturnType<typeof createPlaygroundService>;
