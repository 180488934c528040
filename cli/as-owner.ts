// Compose mounts the user's results folder into the coordinator's container. Whoever owns that folder on the
// host (the clone's owner: a desktop user, or root in CI) is who the report should belong to, and no fixed uid
// fits them all: started as root, the coordinator takes on the folder's owner before it reads or writes
// anything, so the report is the user's own file and no chmod is needed first.
import { statSync } from 'node:fs';
import { ConfigError } from '../shared/control/run-config.js';

/** Become the owner (uid and gid) of `dir` when running as root; otherwise nothing changes. */
export function becomeOwnerOf(dir: string): void {
  if (process.getuid?.() !== 0) return; // not root: this process cannot change who it is, and need not
  let owner: { uid: number; gid: number };
  try {
    owner = statSync(dir);
  } catch (err) {
    throw new ConfigError(`--as-owner-of: ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // Groups first, then the group, then the user: after setuid a process may no longer change the others.
  process.setgroups!([owner.gid]);
  process.setgid!(owner.gid);
  process.setuid!(owner.uid);
}
