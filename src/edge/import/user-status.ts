import { emptyReport, type ImportSession, type TableReport } from '../../kit/db/batch-import.js';
import { switchUserKeys } from '../customers/access.js';

const CHUNK = 200;

/**
 * The keys of the imported users follow their accounts, as they would after an admin's disable or enable: off
 * for each user whose account is disabled (disabled in new-api, whose relay refuses a banned user's tokens,
 * or held by the import), on again for each one enabled since. Answers the report line.
 */
export async function mirrorUserStatus(session: ImportSession, userIds: number[], disabled: ReadonlySet<number>, by: string): Promise<TableReport> {
  const report = { ...emptyReport("disabled users' keys"), read: userIds.length };
  let off = 0;
  let on = 0;
  for (let i = 0; i < userIds.length; i += CHUNK) {
    const chunk = userIds.slice(i, i + CHUNK);
    await session.batch(async (trx) => {
      for (const id of chunk) {
        const enabled = !disabled.has(id);
        if (await switchUserKeys(trx, id, enabled, by)) enabled ? on++ : off++;
      }
    });
  }
  report.updated = off + on;
  report.unchanged = userIds.length - off - on;
  report.note = `keys turned off for ${off} disabled users, on again for ${on} enabled ones`;
  return report;
}
