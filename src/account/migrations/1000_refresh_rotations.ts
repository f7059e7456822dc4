import type { Kysely, Migration } from 'kysely';

/**
 * When each of a session's recent refresh-token rotations happened (epoch seconds, newest first, only those
 * still inside the reuse grace window): a token k rotations behind is accepted only inside its own window.
 */
export const refreshRotations: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('user_sessions').addColumn('recent_rotations', 'varchar(255)').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('user_sessions').dropColumn('recent_rotations').execute();
  },
};
