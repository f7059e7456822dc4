import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Skip } from '../../src/kit/db/batch-import.js';
import { CORRUPT_INFO, readChannelInfo } from '../../src/gateway/import/channel-info.js';
import { mapChannel, type MappedChannel } from '../../src/gateway/import/channels.js';

const INFO = { is_multi_key: true, multi_key_size: 2, multi_key_status_list: { 1: 3 }, multi_key_disabled_reason: { 1: 'quota' }, multi_key_disabled_time: { 1: 1700000000 }, multi_key_polling_index: 1, multi_key_mode: 'polling' };
const TEXT = JSON.stringify(INFO);

test('channel_info is read as each driver hands it over: a BLOB (Buffer, Uint8Array), text, or parsed JSON', () => {
  for (const v of [Buffer.from(TEXT), new Uint8Array(Buffer.from(TEXT)), Buffer.from(` ${TEXT}`).subarray(1), TEXT, JSON.parse(TEXT)]) {
    assert.deepEqual(readChannelInfo(v), INFO, String(v?.constructor?.name));
  }
});

test('an empty channel_info (a channel older than the column) is a single-key channel', () => {
  for (const v of [null, undefined, '', ' ', 'null', Buffer.alloc(0)]) {
    const info = readChannelInfo(v);
    assert.ok(!(info instanceof Skip));
    assert.equal(info.is_multi_key, false);
  }
});

test('a channel_info new-api could not read is refused with the reason the report shows', () => {
  const corrupt = [
    Buffer.from('{"is_multi_key":tr'), '{', '[1]', '"text"', '5', 'true',
    { is_multi_key: 'yes' }, { multi_key_size: 'three' }, { multi_key_size: 1.5 }, { multi_key_polling_index: '1' }, { multi_key_mode: 2 },
    { multi_key_status_list: { a: 1 } }, { multi_key_status_list: { 1: 'x' } }, { multi_key_status_list: [1] },
    { multi_key_disabled_reason: { 0: 5 } }, { multi_key_disabled_time: { 0: 'now' } },
  ];
  for (const v of corrupt) {
    const r = readChannelInfo(v);
    assert.ok(r instanceof Skip, JSON.stringify(v));
    assert.equal(r.reason, CORRUPT_INFO);
  }
});

test("a multi-key channel whose channel_info is a BLOB keeps its keys' state; the organization comes from open_ai_organization", () => {
  const m = mapChannel({ id: 1, type: 1, key: 'sk-a\nsk-b\n', name: 'm', models: 'gpt-4o', group: 'default', open_ai_organization: 'org-9', channel_info: Buffer.from(TEXT) });
  assert.ok(!(m instanceof Skip));
  const { row, keyText } = m as MappedChannel;
  assert.equal(keyText, 'sk-a\nsk-b');
  assert.equal(row.openai_organization, 'org-9');
  assert.deepEqual(JSON.parse(row.channel_info!), INFO);
  const bad = mapChannel({ id: 2, type: 1, key: 'sk-a', name: 'm', models: 'gpt-4o', group: 'default', channel_info: Buffer.from('{') });
  assert.deepEqual(bad, new Skip(CORRUPT_INFO));
});
