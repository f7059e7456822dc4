import fs from 'node:fs';

const OWNER_ONLY = 0o600;
const COMPANION_SUFFIXES = ['-wal', '-shm', '-journal'];

/**
 * Makes a SQLite database file owner-only (0600) before it is opened for writing: creates it empty when
 * missing (SQLite takes an empty file as an empty database), narrows an existing one, and narrows the -wal,
 * -shm and -journal files an earlier run left. The companions SQLite creates later take the database file's
 * mode whatever the umask (its unix VFS creates them with that mode and fchmods them to it).
 */
export function restrictSqliteFiles(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', OWNER_ONLY));
  fs.chmodSync(file, OWNER_ONLY);
  for (const suffix of COMPANION_SUFFIXES) {
    try {
      fs.chmodSync(file + suffix, OWNER_ONLY);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}
