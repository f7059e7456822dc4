import type { Migration } from 'kysely';
import type { DialectName } from '../../kit/db/index.js';
import { core } from './0001_core.js';
import { flows } from './0002_flows.js';
import { secondFactor } from './0100_second_factor.js';
import { emailOAuth } from './0200_email_oauth.js';
import { importMapMigration } from '../../kit/db/import-map.js';
import { passkeyUserHandle } from './0901_passkey_user_handle.js';
import { refreshRotations } from './1000_refresh_rotations.js';

/**
 * Account migrations, applied in name order at start. Each feature area takes its own number range so
 * parallel work does not collide: 0001–0099 core, 0100–0199 second factor and passkeys,
 * 0200–0299 email and OAuth, 0900–0999 imports from other systems. Changes made after those ranges were
 * deployed take 1000 and up, so they sort after every applied one.
 */
export function accountMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001_core': core(dialect),
    '0002_flows': flows(dialect),
    '0100_second_factor': secondFactor,
    '0200_email_oauth': emailOAuth,
    '0900_import_map': importMapMigration,
    '0901_passkey_user_handle': passkeyUserHandle,
    '1000_refresh_rotations': refreshRotations,
  };
}
