import { accountOperations } from '../src/account/app.js';
import { gatewayOperations } from '../src/gateway/app.js';
import { edgeOperations } from '../src/edge/app.js';
import { buildManifest, type ManifestEntry } from '../src/contract/manifest.js';
import { referenceManifest } from '../src/contract/coverage.js';

function row(m: ManifestEntry): string {
  const access = [m.auth, m.permission, m.scope].filter(Boolean).join('; ');
  const fields = m.fields.map((f) => `${f.in}:${f.name}${f.required ? '*' : ''}`).join(', ') || '—';
  return `| ${m.operation} | \`${m.method} ${m.path}\` | ${m.summary} | ${access} | ${fields} | ${m.state} |`;
}

/** docs/operations.md, generated from the registry: one table per deployable. */
export function renderOperationsDoc(): string {
  const manifest = buildManifest([...accountOperations(), ...gatewayOperations(), ...edgeOperations()]);
  const count = (d: string, s: string) => manifest.filter((m) => m.deployable === d && m.state === s).length;
  const parts = [
    '# Operations',
    '',
    'Generated from the operation registry by `npm run docs` (do not edit by hand). `npm run manifest` prints',
    'the same data as JSON. Fields: `in:name`, `*` = required. State `planned` answers 501 `NOT_IMPLEMENTED`.',
    'Rows `plugin:<key>:<n>` are routes of the task plugins shipped in `plugins/`, in their default state',
    '(`disabled` until G72 enables the plugin); `npm run manifest` also lists those installed in `GATEWAY_PLUGIN_DIR`.',
    'The edge serves SPEC\'s archived machine-facing public API (E01) and the placeholder routes of SPEC\'s coverage',
    'notes (EP01–EP12, declared in src/contract/coverage.ts), which answer 501 `api_not_implemented`. The account',
    'service answers the same 501 on the routes new-api\'s own dashboard calls outside SPEC (AP01–AP48, declared in',
    'src/contract/dashboard-routes.ts) after their authentication; AS01–AS04 are what that dashboard needs to sign in.',
    '',
  ];
  for (const deployable of ['account', 'gateway', 'edge']) {
    const placeholders = count(deployable, 'placeholder');
    parts.push(
      `## ${deployable}`,
      '',
      `${count(deployable, 'implemented')} implemented, ${count(deployable, 'planned')} planned${placeholders ? `, ${placeholders} placeholder (501 \`api_not_implemented\`)` : ''}.`,
      '',
      '| id | route | summary | access | fields | state |',
      '|---|---|---|---|---|---|',
      ...manifest.filter((m) => m.deployable === deployable).map(row),
      '',
    );
  }
  parts.push(
    '## Reference-only routes and aliases',
    '',
    'Routes of SPEC\'s coverage notes that are not operations of their own (src/contract/coverage.ts): an `alias` is',
    'answered by the operation its summary names; a `reference-only` route is not served (a JSON 404) and is not',
    'counted as implemented. Routes that task plugins register are listed above with their plugin and version.',
    '',
    '| id | route | deployable | summary | access | state |',
    '|---|---|---|---|---|---|',
    ...referenceManifest().map((m) => `| ${m.operation} | \`${m.method} ${m.path}\` | ${m.deployable} | ${m.summary} | ${[m.auth, m.permission].filter(Boolean).join('; ')} | ${m.state} |`),
    '',
  );
  return parts.join('\n');
}
