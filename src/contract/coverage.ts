import { AppError } from '../kit/http/errors.js';
import type { RegisteredOperation } from './registry.js';
import type { HttpMethod, OperationSpec } from './types.js';

/**
 * SPEC "Reference-only, dynamic and placeholder routes", last bullet: OpenAI-compatible routes the
 * reference registers but does not support. The edge serves them (after the developer credential, as the
 * reference does after its token check) with the reference's answer: 501 `api_not_implemented`.
 */
export const placeholderRoutes: { id: string; method: HttpMethod; path: string; summary: string }[] = [
  { id: 'EP01', method: 'GET', path: '/v1/files', summary: 'List files (placeholder)' },
  { id: 'EP02', method: 'POST', path: '/v1/files', summary: 'Upload a file (placeholder)' },
  { id: 'EP03', method: 'DELETE', path: '/v1/files/:id', summary: 'Delete a file (placeholder)' },
  { id: 'EP04', method: 'GET', path: '/v1/files/:id', summary: 'Read a file (placeholder)' },
  { id: 'EP05', method: 'GET', path: '/v1/files/:id/content', summary: 'Read a file\'s content (placeholder)' },
  { id: 'EP06', method: 'GET', path: '/v1/fine-tunes', summary: 'List fine-tunes (placeholder)' },
  { id: 'EP07', method: 'POST', path: '/v1/fine-tunes', summary: 'Create a fine-tune (placeholder)' },
  { id: 'EP08', method: 'GET', path: '/v1/fine-tunes/:id', summary: 'Read a fine-tune (placeholder)' },
  { id: 'EP09', method: 'POST', path: '/v1/fine-tunes/:id/cancel', summary: 'Cancel a fine-tune (placeholder)' },
  { id: 'EP10', method: 'GET', path: '/v1/fine-tunes/:id/events', summary: 'Fine-tune events (placeholder)' },
  { id: 'EP11', method: 'POST', path: '/v1/images/variations', summary: 'Image variations (placeholder)' },
  { id: 'EP12', method: 'DELETE', path: '/v1/models/:model', summary: 'Delete a model (placeholder)' },
];

/** The placeholder routes as registered operations of the edge, state `placeholder`. */
export function placeholderOperations(): RegisteredOperation[] {
  return placeholderRoutes.map((r) => {
    const spec: OperationSpec = { ...r, deployable: 'edge', auth: 'developer' };
    return {
      spec,
      state: 'placeholder',
      impl: {
        id: r.id,
        // Before the body is parsed: a multipart upload gets the same 501, not a 415.
        gate: async () => {
          throw new AppError('api_not_implemented');
        },
        handler: async () => {
          throw new AppError('api_not_implemented');
        },
      },
    };
  });
}
