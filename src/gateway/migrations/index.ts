import type { Kysely, Migration } from 'kysely';
import type { DialectName } from '../../kit/db/index.js';

/** Gateway migrations, applied in name order at start. */
export function gatewayMigrations(_dialect: DialectName): Record<string, Migration> {
  return {
    '0001_meta': {
      async up(db: Kysely<any>) {
        await db.schema
          .createTable('gateway_meta')
          .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
      },
    },
  };
}
