// PostgreSQL's client tools (pg_dump, pg_restore) for backups and online moves: TESSERA_PG_BIN names their folder;
// unset, the newest of the PATH's and of /usr/lib/postgresql/<version>/bin (Debian's layout, where several majors
// live side by side) is taken. pg_dump must be at least as new as the server it dumps, pg_restore as the dump: a
// caller checks the servers' major version with `pgToolsFor`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** A folder of pg_dump and pg_restore (empty `dir`: the PATH's) and their major version. */
export type PgTools = { dir: string; major: number };

/** The major version a `pg_dump --version` prints ("pg_dump (PostgreSQL) 15.20 (Debian ...)"); 9.6 for 9.6.x. */
export function parseToolVersion(out: string): number | undefined {
  const m = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(out);
  if (!m) return undefined;
  const major = Number(m[1]);
  return major >= 10 ? major : Number(`${m[1]}.${m[2] ?? 0}`);
}

function versionIn(dir: string): PgTools | undefined {
  try {
    const out = execFileSync(dir ? path.join(dir, 'pg_dump') : 'pg_dump', ['--version'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const major = parseToolVersion(out);
    if (major === undefined) return undefined;
    if (dir && !fs.existsSync(path.join(dir, 'pg_restore'))) return undefined;
    return { dir, major };
  } catch {
    return undefined;
  }
}

const found = new Map<string, PgTools[]>();

/** Every usable folder of tools, newest first: only `pgBin` when set. Asked once per process and folder. */
export function discoverPgTools(pgBin: string | undefined): PgTools[] {
  const key = pgBin ?? '';
  const hit = found.get(key);
  if (hit) return hit;
  const dirs = pgBin
    ? [pgBin]
    : [
        '',
        ...(fs.existsSync('/usr/lib/postgresql')
          ? fs.readdirSync('/usr/lib/postgresql').map((v) => path.join('/usr/lib/postgresql', v, 'bin'))
          : []),
      ];
  const list = dirs.flatMap((d) => versionIn(d) ?? []).sort((a, b) => b.major - a.major);
  found.set(key, list);
  return list;
}

/** The path of `name` in the newest tools (`name` alone, from the PATH, when none is found: its error then says so). */
export function pgToolPath(pgBin: string | undefined, name: 'pg_dump' | 'pg_restore'): string {
  const best = discoverPgTools(pgBin)[0];
  if (best?.dir) return path.join(best.dir, name);
  return pgBin ? path.join(pgBin, name) : name;
}

/**
 * The tools for servers of major version `need` (the highest of the servers involved), or why there are none: a
 * message naming the versions and TESSERA_PG_BIN.
 */
export function pgToolsFor(
  pgBin: string | undefined,
  need: number,
): { tools: PgTools; problem?: undefined } | { tools?: undefined; problem: string; newest: number | null } {
  const best = discoverPgTools(pgBin)[0];
  if (best && best.major >= need) return { tools: best };
  return {
    newest: best?.major ?? null,
    problem: best
      ? `pg_dump ${best.major} (${best.dir || 'PATH'}) is older than the servers (PostgreSQL ${need}): set TESSERA_PG_BIN to the tools of PostgreSQL ${need} or newer`
      : `no pg_dump/pg_restore found (${pgBin || 'PATH, /usr/lib/postgresql/*/bin'}): set TESSERA_PG_BIN to the tools of PostgreSQL ${need} or newer`,
  };
}
