import { placeholderOperation } from './coverage.js';
import type { RegisteredOperation } from './registry.js';
import type { AuthClass, HttpMethod } from './types.js';

/**
 * new-api's admin pages whose data this product keeps in the gateway (channels, models and vendors, system
 * settings, performance, system info and tasks, deployments): the routes its dashboard calls for them, on
 * the account service. After the reference's authentication (admin, or root where new-api asks root) they
 * answer 501 GATEWAY_CONSOLE_ONLY, whose message names the gateway console, instead of a bare 404; state
 * `placeholder` in the manifest (docs/differences.md, "The reference dashboard"). Custom OAuth providers,
 * an account setting kept in configuration here, answer ACCOUNT_CLI_ONLY. `GET /api/models/` is AP41's
 * (trailing slashes are one route here), which answers the same code (src/contract/dashboard-routes.ts).
 */
type Code = 'GATEWAY_CONSOLE_ONLY' | 'ACCOUNT_CLI_ONLY';
type Route = [method: HttpMethod, path: string, auth: AuthClass, summary: string, code: Code];

const admin = (method: HttpMethod, path: string, summary: string): Route => [method, path, 'admin', summary, 'GATEWAY_CONSOLE_ONLY'];
const root = (method: HttpMethod, path: string, summary: string): Route => [method, path, 'root', summary, 'GATEWAY_CONSOLE_ONLY'];
const rootCli = (method: HttpMethod, path: string, summary: string): Route => [method, path, 'root', summary, 'ACCOUNT_CLI_ONLY'];

/** In id order (AG01…): add new routes at the end. */
const routes: Route[] = [
  // Channels (new-api's router/channel-router.go).
  admin('GET', '/api/channel/', 'Channel list'),
  admin('GET', '/api/channel/search', 'Channel search'),
  admin('GET', '/api/channel/models', 'Models of every channel type'),
  admin('GET', '/api/channel/models_enabled', 'Models of enabled channels'),
  admin('GET', '/api/channel/ops', 'Channel operations state'),
  admin('GET', '/api/channel/:id', 'One channel'),
  admin('POST', '/api/channel/:id/key', 'Reveal a channel key'),
  admin('GET', '/api/channel/test', 'Test every channel'),
  admin('GET', '/api/channel/test/:id', 'Test one channel'),
  admin('GET', '/api/channel/update_balance', 'Refresh every channel balance'),
  admin('GET', '/api/channel/update_balance/:id', 'Refresh one channel balance'),
  admin('POST', '/api/channel/', 'Create a channel'),
  admin('PUT', '/api/channel/', 'Update a channel'),
  admin('POST', '/api/channel/status/batch', 'Channel status in batch'),
  admin('POST', '/api/channel/:id/status', 'Channel status'),
  admin('DELETE', '/api/channel/disabled', 'Delete disabled channels'),
  admin('POST', '/api/channel/tag/disabled', 'Disable a tag'),
  admin('POST', '/api/channel/tag/enabled', 'Enable a tag'),
  admin('PUT', '/api/channel/tag', 'Edit a tag'),
  admin('DELETE', '/api/channel/:id', 'Delete a channel'),
  admin('POST', '/api/channel/batch', 'Delete channels in batch'),
  admin('POST', '/api/channel/fix', 'Rebuild channel abilities'),
  admin('GET', '/api/channel/fetch_models/:id', 'Fetch the models of a channel'),
  admin('POST', '/api/channel/fetch_models', 'Fetch the models of an upstream'),
  admin('POST', '/api/channel/:id/codex/refresh', 'Refresh a Codex credential'),
  admin('GET', '/api/channel/:id/codex/usage', 'Codex channel usage'),
  admin('GET', '/api/channel/:id/codex/usage/reset-credits', 'Codex rate-limit reset credits'),
  admin('POST', '/api/channel/:id/codex/usage/reset', 'Reset Codex channel usage'),
  admin('POST', '/api/channel/ollama/pull', 'Pull an Ollama model'),
  admin('POST', '/api/channel/ollama/pull/stream', 'Pull an Ollama model, streamed'),
  admin('DELETE', '/api/channel/ollama/delete', 'Delete an Ollama model'),
  admin('GET', '/api/channel/ollama/version/:id', 'Ollama version'),
  admin('POST', '/api/channel/batch/tag', 'Tag channels in batch'),
  admin('GET', '/api/channel/tag/models', 'Models of a tag'),
  admin('POST', '/api/channel/copy/:id', 'Copy a channel'),
  admin('POST', '/api/channel/multi_key/manage', 'Manage multi-key channels'),
  admin('POST', '/api/channel/upstream_updates/apply', 'Apply upstream model updates'),
  admin('POST', '/api/channel/upstream_updates/apply_all', 'Apply every upstream model update'),
  admin('POST', '/api/channel/upstream_updates/detect', 'Detect upstream model updates'),
  admin('POST', '/api/channel/upstream_updates/detect_all', 'Detect every upstream model update'),
  admin('GET', '/api/log/channel_affinity_usage_cache', 'Channel affinity usage cache'),
  // Models, vendors and prefill groups (GET /api/models/ is AP41).
  admin('GET', '/api/models/sync_upstream/preview', 'Preview the upstream model sync'),
  admin('POST', '/api/models/sync_upstream', 'Sync models from upstream'),
  admin('GET', '/api/models/missing', 'Models without metadata'),
  admin('GET', '/api/models/search', 'Model search'),
  admin('GET', '/api/models/:id', 'One model'),
  admin('POST', '/api/models/', 'Create a model'),
  admin('PUT', '/api/models/', 'Update a model'),
  admin('DELETE', '/api/models/:id', 'Delete a model'),
  admin('GET', '/api/vendors/', 'Vendor list'),
  admin('GET', '/api/vendors/search', 'Vendor search'),
  admin('GET', '/api/vendors/:id', 'One vendor'),
  admin('POST', '/api/vendors/', 'Create a vendor'),
  admin('PUT', '/api/vendors/', 'Update a vendor'),
  admin('DELETE', '/api/vendors/:id', 'Delete a vendor'),
  admin('GET', '/api/prefill_group/', 'Prefill groups'),
  admin('POST', '/api/prefill_group/', 'Create a prefill group'),
  admin('PUT', '/api/prefill_group/', 'Update a prefill group'),
  admin('DELETE', '/api/prefill_group/:id', 'Delete a prefill group'),
  // System settings.
  root('GET', '/api/option/', 'System options'),
  root('PUT', '/api/option/', 'Update a system option'),
  root('POST', '/api/option/payment_compliance', 'Confirm payment compliance'),
  root('GET', '/api/option/channel_affinity_cache', 'Channel affinity cache'),
  root('DELETE', '/api/option/channel_affinity_cache', 'Clear the channel affinity cache'),
  root('POST', '/api/option/rest_model_ratio', 'Reset model ratios'),
  root('GET', '/api/option/waffo-pancake/catalog', 'Waffo catalog'),
  root('POST', '/api/option/waffo-pancake/pair', 'Pair Waffo'),
  root('POST', '/api/option/waffo-pancake/save', 'Save Waffo settings'),
  root('POST', '/api/option/waffo-pancake/subscription-product', 'Create a Waffo subscription product'),
  root('GET', '/api/option/waffo-pancake/subscription-product-options', 'Waffo subscription product options'),
  root('GET', '/api/ratio_sync/channels', 'Channels to sync ratios from'),
  root('POST', '/api/ratio_sync/fetch', 'Fetch upstream ratios'),
  root('GET', '/api/performance/stats', 'Performance statistics'),
  root('DELETE', '/api/performance/disk_cache', 'Clear the disk cache'),
  root('POST', '/api/performance/reset_stats', 'Reset performance statistics'),
  root('POST', '/api/performance/gc', 'Force garbage collection'),
  root('GET', '/api/performance/logs', 'Server log files'),
  root('DELETE', '/api/performance/logs', 'Clean up server log files'),
  // System info and system tasks.
  root('GET', '/api/system-info/instances', 'Running instances'),
  root('DELETE', '/api/system-info/stale-instances', 'Forget stale instances'),
  root('DELETE', '/api/system-info/instances/:node_name', 'Forget one stale instance'),
  root('POST', '/api/system-task/log-cleanup', 'Start a log cleanup task'),
  root('GET', '/api/system-task/list', 'System tasks'),
  root('GET', '/api/system-task/current', 'The running system task'),
  root('GET', '/api/system-task/:task_id', 'One system task'),
  // Model deployments.
  admin('GET', '/api/deployments/settings', 'Deployment settings'),
  admin('POST', '/api/deployments/settings/test-connection', 'Test the deployment provider'),
  admin('GET', '/api/deployments/', 'Deployment list'),
  admin('GET', '/api/deployments/search', 'Deployment search'),
  admin('POST', '/api/deployments/test-connection', 'Test the deployment provider'),
  admin('GET', '/api/deployments/hardware-types', 'Hardware types'),
  admin('GET', '/api/deployments/locations', 'Locations'),
  admin('GET', '/api/deployments/available-replicas', 'Available replicas'),
  admin('POST', '/api/deployments/price-estimation', 'Price estimation'),
  admin('GET', '/api/deployments/check-name', 'Check a deployment name'),
  admin('POST', '/api/deployments/', 'Create a deployment'),
  admin('GET', '/api/deployments/:id', 'One deployment'),
  admin('GET', '/api/deployments/:id/logs', 'Deployment logs'),
  admin('GET', '/api/deployments/:id/containers', 'Deployment containers'),
  admin('GET', '/api/deployments/:id/containers/:container_id', 'One container'),
  admin('PUT', '/api/deployments/:id', 'Update a deployment'),
  admin('PUT', '/api/deployments/:id/name', 'Rename a deployment'),
  admin('POST', '/api/deployments/:id/extend', 'Extend a deployment'),
  admin('DELETE', '/api/deployments/:id', 'Delete a deployment'),
  // Custom OAuth providers: configuration of the account service here.
  rootCli('POST', '/api/custom-oauth-provider/discovery', 'Discover a custom OAuth provider'),
  rootCli('GET', '/api/custom-oauth-provider/', 'Custom OAuth providers'),
  rootCli('GET', '/api/custom-oauth-provider/:id', 'One custom OAuth provider'),
  rootCli('POST', '/api/custom-oauth-provider/', 'Create a custom OAuth provider'),
  rootCli('PUT', '/api/custom-oauth-provider/:id', 'Update a custom OAuth provider'),
  rootCli('DELETE', '/api/custom-oauth-provider/:id', 'Delete a custom OAuth provider'),
];

/** An operation name from the path: `/api/channel/:id/codex/usage` → `channelIdCodexUsage`. */
function nameOf(method: HttpMethod, path: string): string {
  const words = path
    .replace(/^\/api\//, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const camel = words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
  return `${method.toLowerCase()}${camel[0].toUpperCase()}${camel.slice(1)}`;
}

/** The admin pages' routes as placeholder operations of the account service. */
export function gatewayConsoleOperations(): RegisteredOperation[] {
  return routes.map(([method, path, auth, summary, code], i) =>
    placeholderOperation(
      {
        id: `AG${String(i + 1).padStart(2, '0')}`,
        name: nameOf(method, path),
        method,
        path,
        deployable: 'account',
        auth,
        summary: `${summary} (new-api dashboard; ${code === 'GATEWAY_CONSOLE_ONLY' ? 'in the gateway console here' : 'set in configuration here'})`,
      },
      code,
    ),
  );
}
