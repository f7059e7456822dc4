import os from 'node:os';

/** Who ran a CLI command, as audit logs name it: `cli:` and the operating-system user. */
export function cliActorName(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    /* no passwd entry (some containers): keep 'unknown' */
  }
  return `cli:${user}`.slice(0, 64);
}
