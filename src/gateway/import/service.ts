import { Skip, type ImportSession, type TableReport, type TableStep } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { int, text, type Source } from '../../kit/db/source.js';
import { audit } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import type { ChannelService } from '../channels/service.js';
import { getChannel, insertChannel, rebuildAbilities } from '../channels/store.js';
import { splitList } from '../channels/types.js';
import { assertSealingKey } from '../sealing.js';
import { channelFields, mapChannel, type Db, type MappedChannel, type SourceRow } from './channels.js';

const ACTOR = { id: 0, name: 'cli:import' };
/** Abilities listed in the report at most (the rest are counted). */
const MAX_LISTED = 1000;

interface Item {
  src: SourceRow;
  mapped: MappedChannel | Skip;
}

/**
 * The gateway half of `import new-api`: channels (keys sealed on the way in, as G02 seals them) and their
 * abilities, which are rebuilt from each channel's models and groups as every channel write here does.
 */
export async function importGateway(g: { ctx: GatewayContext; services: { channels: ChannelService } }, source: Source, session: ImportSession): Promise<TableReport[]> {
  const items: Item[] = (await source.rows('channels')).map((src) => ({ src, mapped: mapChannel(src) }));
  const sealed = (m: MappedChannel) => g.services.channels.seal(m.keyText);
  const step: TableStep<Item> = {
    table: 'channels',
    rows: items,
    id: (r) => String(r.src.id),
    precheck: (r) => (r.mapped instanceof Skip ? r.mapped.reason : null),
    fields: (r) => channelFields(r.mapped as MappedChannel),
    begin: (trx) => assertSealingKey(g.ctx, trx),
    async insert(trx, r) {
      const m = r.mapped as MappedChannel;
      const row = { ...m.row, key: sealed(m) };
      const id = await insertChannel(trx, row);
      await rebuildAbilities(trx, [{ ...row, id }]);
      return id;
    },
    async update(trx, localId, r, changed) {
      const m = r.mapped as MappedChannel;
      const stored = await getChannel(trx, localId, g.ctx.database.dialect === 'postgres');
      if (!stored) return new Skip('the channel imported earlier was deleted here');
      const patch: Record<string, unknown> = {};
      for (const f of changed) {
        if (f === 'key') patch.key = sealed(m);
        else if (f in m.row) patch[f] = (m.row as Record<string, unknown>)[f];
      }
      await trx.updateTable('channels').set(patch).where('id', '=', localId).execute();
      await rebuildAbilities(trx, [{ ...stored, ...patch, id: localId } as never]);
    },
  };
  const channels = await session.run(step);
  if (!session.opts.dryRun && channels.imported + channels.updated > 0) {
    await session.batch((trx) => audit(trx as never, ACTOR, 'cli:import', null, { source: session.opts.source, imported: channels.imported, updated: channels.updated }));
  }
  return [channels, await checkAbilities(source, session)];
}

/**
 * The source's abilities, checked against ours a page at a time: each should exist for its channel's
 * imported copy. Those that do not (a channel left out, or an ability the reference's own rebuild would
 * not make) are listed.
 */
async function checkAbilities(source: Source, session: ImportSession): Promise<TableReport> {
  const report: TableReport = { table: 'abilities', read: 0, imported: 0, updated: 0, unchanged: 0, skipped: 0, failed: 0, problems: [] };
  report.note = "abilities are not copied: they are rebuilt from each imported channel's models and groups";
  await session.batch(async (trx: Db) => {
    const ids = await importMap.all(trx, session.opts.source, 'channels');
    // Pages come in channel order: only the current channel's abilities are held.
    let current: { localId: number; keys: Set<string> } | undefined;
    const oursOf = async (localId: number) => {
      if (current?.localId !== localId) {
        const list = await trx.selectFrom('abilities').select(['group', 'model']).where('channel_id', '=', localId).execute();
        current = { localId, keys: new Set(list.map((a: { group: string; model: string }) => `${a.group}\n${a.model}`)) };
      }
      return current.keys;
    };
    for await (const page of source.pages('abilities', ['channel_id', 'group', 'model'])) {
      for (const a of page) {
        report.read++;
        const localId = ids.get(String(a.channel_id));
        const id = `${int(a.channel_id)}/${text(a.group)}/${text(a.model)}`;
        if (localId !== undefined && (await oursOf(localId)).has(`${text(a.group).trim()}\n${text(a.model).trim()}`)) {
          report.unchanged++;
          continue;
        }
        report.skipped++;
        const reason = localId === undefined ? 'its channel was not imported' : "not implied by the channel's models and groups";
        if (report.problems.length < MAX_LISTED) report.problems.push({ id, reason });
        else report.unlisted = (report.unlisted ?? 0) + 1;
      }
    }
  });
  return report;
}
