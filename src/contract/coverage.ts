import { AppError } from '../kit/http/errors.js';
import type { ManifestEntry } from './manifest.js';
import { operations } from './operations.js';
import type { RegisteredOperation } from './registry.js';
import type { Deployable, HttpMethod, OperationSpec } from './types.js';

/**
 * SPEC "Reference-only, dynamic and placeholder routes", last bullet: OpenAI-compatible routes the
 * reference registers but does not support. The edge serves them (after the developer credential, as the
 * reference does after its token check) with the reference's answer: 501 `api_not_implemented`.
 */
export const placeholderRoutes: { id: string; name: string; method: HttpMethod; path: string; summary: string }[] = [
  { id: 'EP01', name: 'filesList', method: 'GET', path: '/v1/files', summary: 'List files (placeholder)' },
  { id: 'EP02', name: 'fileUpload', method: 'POST', path: '/v1/files', summary: 'Upload a file (placeholder)' },
  { id: 'EP03', name: 'fileDelete', method: 'DELETE', path: '/v1/files/:id', summary: 'Delete a file (placeholder)' },
  { id: 'EP04', name: 'file', method: 'GET', path: '/v1/files/:id', summary: 'Read a file (placeholder)' },
  { id: 'EP05', name: 'fileContent', method: 'GET', path: '/v1/files/:id/content', summary: 'Read a file\'s content (placeholder)' },
  { id: 'EP06', name: 'fineTunes', method: 'GET', path: '/v1/fine-tunes', summary: 'List fine-tunes (placeholder)' },
  { id: 'EP07', name: 'fineTuneCreate', method: 'POST', path: '/v1/fine-tunes', summary: 'Create a fine-tune (placeholder)' },
  { id: 'EP08', name: 'fineTune', method: 'GET', path: '/v1/fine-tunes/:id', summary: 'Read a fine-tune (placeholder)' },
  { id: 'EP09', name: 'fineTuneCancel', method: 'POST', path: '/v1/fine-tunes/:id/cancel', summary: 'Cancel a fine-tune (placeholder)' },
  { id: 'EP10', name: 'fineTuneEvents', method: 'GET', path: '/v1/fine-tunes/:id/events', summary: 'Fine-tune events (placeholder)' },
  { id: 'EP11', name: 'imageVariations', method: 'POST', path: '/v1/images/variations', summary: 'Image variations (placeholder)' },
  { id: 'EP12', name: 'modelDelete', method: 'DELETE', path: '/v1/models/:model', summary: 'Delete a model (placeholder)' },
];

/** The placeholder routes as registered operations of the edge, state `placeholder`. */
export function placeholderOperations(): RegisteredOperation[] {
  return placeholderRoutes.map((r) => placeholderOperation({ ...r, deployable: 'edge', auth: 'developer' }));
}

/**
 * A route answered 501 after its authentication, state `placeholder`: `api_not_implemented`, or a 501 code
 * of the catalog that says where the feature is instead.
 */
export function placeholderOperation(spec: OperationSpec, code = 'api_not_implemented'): RegisteredOperation {
  return {
    spec,
    state: 'placeholder',
    impl: {
      id: spec.id,
      errors: [code],
      // Before the body is parsed: a multipart upload gets the same 501, not a 415.
      gate: async () => {
        throw new AppError(code);
      },
      handler: async () => {
        throw new AppError(code);
      },
    },
  };
}

/**
 * The other routes of SPEC's coverage notes: named in the reference description but not operations of
 * their own here. `alias`: answered by the operation named in `servedBy` (same handler, same rules);
 * `reference-only`: not served (the deployable's JSON 404) and not counted as implemented.
 */
export const referenceRoutes: { id: string; method: HttpMethod; path: string; deployable: Deployable; state: 'alias' | 'reference-only'; servedBy?: string; summary: string }[] = [
  { id: 'R01', method: 'GET', path: '/api/oauth/github', deployable: 'account', state: 'alias', servedBy: 'A01', summary: 'Provider-specific OAuth path of the reference: served by A01 /api/oauth/:provider when GitHub is configured' },
  { id: 'R02', method: 'GET', path: '/api/oauth/discord', deployable: 'account', state: 'alias', servedBy: 'A01', summary: 'Provider-specific OAuth path of the reference: served by A01 /api/oauth/:provider when Discord is configured' },
  { id: 'R03', method: 'GET', path: '/api/oauth/oidc', deployable: 'account', state: 'alias', servedBy: 'A01', summary: 'Provider-specific OAuth path of the reference: served by A01 /api/oauth/:provider when OIDC is configured' },
  { id: 'R04', method: 'GET', path: '/api/oauth/linuxdo', deployable: 'account', state: 'alias', servedBy: 'A01', summary: 'Provider-specific OAuth path of the reference: served by A01 /api/oauth/:provider when LinuxDO is configured' },
  { id: 'R05', method: 'GET', path: '/api/verify/status', deployable: 'account', state: 'reference-only', summary: 'Kept in the reference only: not served, not counted as implemented' },
  { id: 'R06', method: 'GET', path: '/api/task/', deployable: 'gateway', state: 'alias', servedBy: 'GS03', summary: 'The reference\'s spelling of the task list: served by GS03 GET /api/task (one trailing slash is ignored, no redirect)' },
  { id: 'R07', method: 'POST', path: '/videoa/v1/videos/text2video', deployable: 'edge', state: 'reference-only', summary: 'Kept in the reference only (no task plugin registers it): not served' },
  { id: 'R08', method: 'GET', path: '/videoa/v1/videos/text2video/:task_id', deployable: 'edge', state: 'reference-only', summary: 'Kept in the reference only (no task plugin registers it): not served' },
  { id: 'R09', method: 'POST', path: '/videoa/v1/videos/image2video', deployable: 'edge', state: 'reference-only', summary: 'Kept in the reference only (no task plugin registers it): not served' },
  { id: 'R10', method: 'GET', path: '/videoa/v1/videos/image2video/:task_id', deployable: 'edge', state: 'reference-only', summary: 'Kept in the reference only (no task plugin registers it): not served' },
  { id: 'R11', method: 'POST', path: '/videob/', deployable: 'edge', state: 'reference-only', summary: 'Kept in the reference only (no task plugin registers it): not served' },
  { id: 'R12', method: 'POST', path: '/v1beta/models/:model:generateContent', deployable: 'edge', state: 'alias', servedBy: 'E09', summary: "The reference's generic relay route /v1beta/models/*path: served by E09 /v1beta/models/:target ({model}:generateContent, :streamGenerateContent, :countTokens)" },
  // The reference's own paths of SPEC's renamed social (WeChat) and chat-bot (Telegram) routes, which its dashboard calls.
  { id: 'R13', method: 'GET', path: '/api/oauth/wechat', deployable: 'account', state: 'alias', servedBy: 'A09', summary: 'The reference\'s WeChat login path: served by A09 (same handler, auth and limits)' },
  { id: 'R14', method: 'POST', path: '/api/oauth/wechat/bind', deployable: 'account', state: 'alias', servedBy: 'A10', summary: 'The reference\'s WeChat binding path: served by A10 (same handler, auth, proof and limits)' },
  { id: 'R15', method: 'GET', path: '/api/oauth/telegram/login', deployable: 'account', state: 'alias', servedBy: 'A08', summary: 'The reference\'s Telegram login path: served by A08 (same handler, auth and limits)' },
  { id: 'R16', method: 'POST', path: '/api/oauth/telegram/bind/start', deployable: 'account', state: 'alias', servedBy: 'A07', summary: 'The reference\'s Telegram binding start: served by A07 (same handler, auth and limits)' },
  // new-api keeps /api/log/self/search as a deprecated route of its own; here it is the log itself.
  { id: 'R17', method: 'GET', path: '/api/log/self/search', deployable: 'account', state: 'alias', servedBy: 'AP10', summary: 'The reference\'s usage-log search path: served by AP10 GET /api/log/self (same filters, auth and limits)' },
];

const routePattern = (path: string) => new RegExp(`^${path.replace(/:\w+/g, '[^/]+')}/?$`);

/**
 * Aliases whose path the target operation's own route does not match: each is registered as one more
 * route of that operation (src/contract/registry.ts). The others (R01–R04, R06) reach the target already.
 */
export function aliasRoutes(deployable: Deployable): { id: string; method: HttpMethod; path: string; servedBy: string }[] {
  return referenceRoutes
    .filter((r) => r.deployable === deployable && r.state === 'alias' && r.servedBy)
    .filter((r) => !routePattern(target(r.servedBy)!.path).test(r.path))
    .map((r) => ({ id: r.id, method: r.method, path: r.path, servedBy: r.servedBy! }));
}

const target = (id?: string) => operations.find((o) => o.id === id);

/** The reference routes as manifest rows (an alias carries its target's access rule). */
export function referenceManifest(): ManifestEntry[] {
  return referenceRoutes.map((r) => ({
    method: r.method,
    path: r.path,
    operation: r.id,
    deployable: r.deployable,
    summary: r.summary,
    auth: target(r.servedBy)?.auth ?? 'none',
    permission: target(r.servedBy)?.permission ?? null,
    scope: null,
    fields: [],
    state: r.state,
    plugin: null,
    version: null,
    metering: null,
    cancellable: false,
    addition: false,
  }));
}
