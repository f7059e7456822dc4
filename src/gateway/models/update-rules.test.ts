import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applySelection, ignoreMatcher, mappingOf, pendingChanges, readSettings, SETTINGS_MAX, settingsText, usableUpstream } from './update-rules.js';

test('pending changes: mapping targets count as listed, mapping sources are never removed, ignores apply to adds only', () => {
  const mapping = mappingOf(JSON.stringify({ ' alias ': ' target ', empty: '', n: 1 }));
  assert.deepEqual([...mapping], [['alias', 'target']]);
  const p = pendingChanges(['a', 'alias', 'gone', 'ignored-local'], ['a', 'target', 'new', 'skip-me', 'Skip-Too'], ['skip-me', 'regex:(?i)^skip-t', 'ignored-local'], mapping);
  assert.deepEqual(p.add, ['new']);
  assert.deepEqual(p.remove, ['gone', 'ignored-local']);
});

test('ignore patterns: unanchored RE2, bad or oversized ones ignore nothing, no catastrophic backtracking', () => {
  const m = ignoreMatcher(['regex:mini', 'regex:([', 'regex:', 'regex:' + 'a'.repeat(513), 'regex:(a+)+$', 'regex:\\d{1,3}x']);
  assert.equal(m('gpt-4o-mini-2024'), true);
  assert.equal(m('12x'), true, 'a pattern with a comma still works');
  assert.equal(m('anything'), false, 'an empty pattern matches nothing here');
  const started = Date.now();
  assert.equal(m('a'.repeat(5000) + '!'), false);
  assert.ok(Date.now() - started < 1000);
});

test('usable upstream ids: trimmed, unique, no commas, at most 255 characters', () => {
  assert.deepEqual(usableUpstream([' a ', 'a', '', 'b,c', 'x'.repeat(256), 'é'.repeat(255)]), ['a', 'é'.repeat(255)]);
});

test('applySelection: narrowed to staged lists, add beats remove and ignore', () => {
  const s = readSettings(JSON.stringify({ upstream_model_update_last_detected_models: ['n1', 'n2', 'both'], upstream_model_update_last_removed_models: ['old', 'both'], upstream_model_update_ignored_models: ['n1', 'regex:x'] }));
  const r = applySelection(['m', 'old', 'both'], s, { add_models: ['n1', 'both', 'nope'], remove_models: ['old', 'both', 'm'], ignore_models: ['n2', 'n1'] });
  assert.deepEqual(r.added, ['n1', 'both']);
  assert.deepEqual(r.removed, ['old']);
  assert.deepEqual(r.ignored, ['n2']);
  assert.deepEqual(r.models, ['m', 'both', 'n1']);
  assert.deepEqual(r.settings.ignored, ['regex:x', 'n2']);
  assert.deepEqual(r.settings.detected, []);
  assert.deepEqual(r.settings.removed, ['both']);
});

test('settings text keeps other fields and stays under the size G03 accepts', () => {
  const s = readSettings(JSON.stringify({ keep: 1, upstream_model_update_check_enabled: true }));
  s.detected = Array.from({ length: 5000 }, (_, i) => `model-number-${i}-with-a-long-name`);
  s.removed = Array.from({ length: 10 }, (_, i) => `r${i}`);
  const text = settingsText(s);
  assert.ok(text.length <= SETTINGS_MAX, String(text.length));
  const back = readSettings(text);
  assert.equal(back.raw.keep, 1);
  assert.equal(back.checkEnabled, true);
  assert.ok(back.detected.length > 1000 && back.detected.length < 5000);
  assert.deepEqual(back.detected, s.detected.slice(0, back.detected.length));
  assert.deepEqual(back.removed, s.removed);
  assert.deepEqual(readSettings('not json').raw, {});
  assert.equal(readSettings('{"upstream_model_update_check_enabled":"true"}').checkEnabled, false);
});
