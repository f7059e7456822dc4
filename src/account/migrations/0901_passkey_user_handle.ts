import type { Kysely, Migration } from 'kysely';

/** The user handle of a passkey registered elsewhere (new-api import): see passkeys/store.ts. */
export const passkeyUserHandle: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('passkey_credentials').addColumn('user_handle', 'varchar(128)').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('passkey_credentials').dropColumn('user_handle').execute();
  },
};
