import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateManifest } from './manifest.js';
import { compareVersions } from './loader.js';

const route = (r: Record<string, unknown> = {}) => ({ method: 'GET', path: '/api/task/demo/list', summary: 's', auth: 'admin', handler: 'list', ...r });
const base = (m: Record<string, unknown> = {}) => ({ key: 'demo', version: '1.0.0', apiVersion: 1, name: 'Demo', models: [], channelTypes: [], entry: 'index.mjs', routes: [route()], ...m });
const id = [{ in: 'path', name: 'task_id', type: 'string' }];

test('a well-formed manifest passes', () => {
  assert.equal(validateManifest(base()).key, 'demo');
  assert.equal(validateManifest(base({ routes: [route({ method: 'POST', task: 'create', metering: 'per_task', fields: [{ in: 'body', name: 'prompt', type: 'string', required: true }] })] })).routes.length, 1);
});

test('manifests are validated strictly', () => {
  const cases: [unknown, RegExp][] = [
    [base({ key: 'Demo' }), /\/key/],
    [base({ key: '../x' }), /\/key/],
    [base({ version: '1.0' }), /\/version/],
    [base({ apiVersion: 2 }), /\/apiVersion/],
    [base({ extra: 1 }), /manifest/],
    [base({ website: 'javascript:alert(1)' }), /website/],
    [base({ baseUrl: 'https://user:pw@x.example' }), /baseUrl/],
    [base({ entry: '../outside.mjs' }), /entry/],
    [base({ entry: 'index.cjs' }), /entry/],
    [base({ routes: [] }), /routes/],
    [base({ routes: [route({ path: '/admin/x' })] }), /must start with/],
    [base({ routes: [route({ path: '/api/openapi.json' })] }), /reserved/],
    [base({ routes: [route({ path: '/api/:any/x', fields: [{ in: 'path', name: 'any', type: 'string' }] })] }), /literal/],
    [base({ routes: [route({ path: '/api/task/demo/X' })] }), /segments/],
    [base({ routes: [route({ path: '/api/task/demo/a/../b' })] }), /segments/],
    [base({ routes: [route({ method: 'TRACE' })] }), /method/],
    [base({ routes: [route({ auth: 'none' })] }), /auth/],
    [base({ routes: [route({ permission: 'authz.Everything' })] }), /unknown permission/],
    [base({ routes: [route({ path: '/api/task/demo/:id' })] }), /path parameters and path fields/],
    [base({ routes: [route({ fields: [{ in: 'body', name: 'x', type: 'string' }] })] }), /no body fields/],
    [base({ routes: [route({ method: 'POST', task: 'create' })] }), /metering/],
    [base({ routes: [route({ task: 'create', metering: 'per_task' })] }), /must be POST/],
    [base({ routes: [route({ metering: 'per_task' })] }), /only a task-creating route/],
    [base({ routes: [route({ task: 'read' })] }), /:task_id/],
    [base({ routes: [route({ path: '/api/task/demo/:task_id', task: 'cancel', fields: id })] }), /cannot be GET/],
    [base({ routes: [route(), route({ path: '/api/task/demo/list' })] }), /declared twice/],
    [base({ routes: [route({ fields: [{ in: 'query', name: 'a', type: 'string' }, { in: 'query', name: 'a', type: 'string' }] })] }), /declared twice/],
    [base({ routes: [route({ handler: 'a-b' })] }), /handler/],
  ];
  for (const [m, re] of cases) assert.throws(() => validateManifest(m), re, JSON.stringify(m).slice(0, 200));
});

test('versions sort semantically', () => {
  const sorted = ['1.10.0', '1.2.0', '1.2.0-beta.1', '0.9.9', '1.2.1'].sort(compareVersions);
  assert.deepEqual(sorted, ['0.9.9', '1.2.0-beta.1', '1.2.0', '1.2.1', '1.10.0']);
});
