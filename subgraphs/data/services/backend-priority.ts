// Long statements yield the CPU to short ones. Every project connection is a PostgreSQL backend process of its own;
// when the server runs on this machine (the embedded default, or a server on loopback), the pool lowers the CPU
// priority (nice 10) of a backend whose statement has run longer than LONG_STATEMENT_MS, and gives it back (or closes
// the connection, where this process may not raise a priority again) when the statement ends. The kernel then serves
// the short statements of every project before the long ones of any: a neighbour's back-to-back heavy statements
// cannot lengthen a well-behaved project's finds, while alone (no one else wants the CPU) a lowered backend runs at
// full speed. This is the interactive-versus-batch rule of every time-sharing scheduler; the plan's statement-time
// budget (database_cpu_seconds_per_minute) still caps how much a project may spend. A server on another host is out
// of reach (its pids are not ours): there, only the budget applies. docs/architecture.md, "Fair shares".
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../../../platform/logger.ts';

/** A statement running longer than this has its backend's CPU priority lowered. */
export const LONG_STATEMENT_MS = 200;
/** The nice value of a lowered backend (0 is the default; 19 the lowest priority). */
export const LOWERED_NICE = 10;

export type BackendPriority = {
  /** Lowers the backend's CPU priority; false when it cannot (not a local PostgreSQL backend, not permitted). */
  lower: (pid: number) => boolean;
  /** Gives the backend its default priority back; false when this process may not (the connection should close). */
  restore: (pid: number) => boolean;
};

/** Whether `databaseUrl` names a server on this machine (loopback address or a Unix socket). */
export function isLocalServer(databaseUrl: string): boolean {
  try {
    const url = new URL(databaseUrl);
    const socketHost = url.searchParams.get('host');
    if (socketHost?.startsWith('/')) return true;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\./.test(host) || host === '';
  } catch {
    return false;
  }
}

/** A process of this machine that is a PostgreSQL backend (its command name), so no other process is ever touched. */
function isPostgresBackend(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return false;
  }
}

/**
 * Creates the priority control for backends of the server at `databaseUrl`; null when it is not on this machine or
 * the platform cannot see its processes (no /proc): then statements are not reprioritised.
 */
export function createBackendPriority(databaseUrl: string, logger: Logger): BackendPriority | null {
  if (!isLocalServer(databaseUrl) || !fs.existsSync('/proc/self/comm')) return null;
  let working = true;
  return {
    lower(pid) {
      if (!working || !isPostgresBackend(pid)) return false;
      try {
        os.setPriority(pid, LOWERED_NICE);
        return true;
      } catch (err) {
        // Not permitted (the server runs as another user and this process is not privileged): stop trying.
        working = false;
        logger.info(
          { err: (err as Error).message },
          'data: cannot lower the CPU priority of project statements on this server; long statements share the CPU equally',
        );
        return false;
      }
    },
    restore(pid) {
      if (!isPostgresBackend(pid)) return false;
      try {
        os.setPriority(pid, 0);
        return os.getPriority(pid) === 0;
      } catch {
        return false; // raising a priority needs privilege: the connection is closed instead
      }
    },
  };
}
