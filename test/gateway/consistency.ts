import assert from 'node:assert/strict';
import { abilityRows } from '../../src/gateway/channels/store.js';
import type { GatewayServer } from '../helpers/gateway.js';

/** The abilities index equals what the channels table implies, row for row. */
export async function assertAbilitiesConsistent(s: GatewayServer) {
  const channels = await s.ctx.db.selectFrom('channels').select(['id', 'group', 'models', 'status', 'priority', 'weight', 'tag']).execute();
  const expected = channels
    .flatMap((c) => abilityRows({ ...c, id: Number(c.id), status: Number(c.status), priority: Number(c.priority), weight: Number(c.weight) }))
    .map((a) => JSON.stringify([a.group, a.model, a.channel_id, a.enabled, a.priority, a.weight, a.tag]))
    .sort();
  const actual = (await s.ctx.db.selectFrom('abilities').selectAll().execute())
    .map((a) => JSON.stringify([a.group, a.model, Number(a.channel_id), Number(a.enabled), Number(a.priority), Number(a.weight), a.tag]))
    .sort();
  assert.deepEqual(actual, expected);
}
