import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operations } from '../../src/contract/operations.js';
import { auditTexts } from '../../web/src/gateway/texts-audit.js';

// The gateway console's audit log shows what was done in words, in English and Chinese, not as
// "Request POST /api/channel/": every gateway write (and the reads that change or reveal something: tests,
// balance updates, model fetches) has a name in both languages, and every name belongs to an operation.
const AUDITED_READS = ['G17', 'G25', 'G33', 'G34', 'G35', 'G36'];

test('every gateway operation the audit log records has an action name in English and Chinese', () => {
  const recorded = operations.filter((o) => o.deployable === 'gateway' && !o.id.startsWith('GR') && (o.method !== 'GET' || AUDITED_READS.includes(o.id))).map((o) => o.id);
  assert.ok(recorded.length > 50);
  const missing = recorded.filter((id) => !auditTexts[`act_${id}`]?.en || !auditTexts[`act_${id}`]?.zh);
  assert.deepEqual(missing, [], 'operations without a readable name');
  for (const [key, text] of Object.entries(auditTexts)) {
    assert.match(text.zh, /[\u4e00-\u9fff]/, `${key} has Chinese`);
    assert.doesNotMatch(text.en, /\/api\//, `${key} is words, not a path`);
    const id = key.slice('act_'.length);
    if (!id.startsWith('cli:') && id !== 'relay') assert.ok(operations.some((o) => o.id === id && o.deployable === 'gateway'), `${key} names a gateway operation`);
  }
});
