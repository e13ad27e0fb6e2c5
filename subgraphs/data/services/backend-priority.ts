// Long statements yield the CPU to short ones. Every project connection is a PostgreSQL backend process of its own;
// when the server runs on this machine (the embedded default, or a server on loopback), the pool lowers the CPU
// priority (nice LOWERED_NICE) of a backend whose statement has used more than LONG_STATEMENT_MS of CPU time while
// another project has a statement in flight (alone, lowering serves no one: pools.ts othersBusy), and gives
// it back (or closes the connection, where this process may not raise a priority again) when the statement ends. CPU
// time, not the time since the statement started: a statement waiting (for a lock, in pg_sleep, for I/O, or for a CPU
// on a busy machine) takes nothing from anyone, and lowering it would only make it wait longer: by elapsed time, a busy
// machine's merely slow statements were lowered, marked their project heavy (its next statements start lowered, see
// pools.ts) and ran slower still, a feedback loop that hurt a well-behaved project most when the machine had the least
// to spare. The kernel then serves the short statements of every project before the long ones of any: a neighbour's
// back-to-back heavy statements cannot lengthen a well-behaved project's finds, while alone (no one else wants the CPU)
// a lowered backend runs at full speed. This is the interactive-versus-batch rule of every time-sharing scheduler; the
// plan's statement-time budget (database_cpu_seconds_per_minute) still caps how much a project may spend. A server on
// another host is out of reach (its pids are not ours): there, only the budget applies. docs/architecture.md, "Fair
// shares".
//
// Where the kernel groups processes by session (`kernel.sched_autogroup_enabled`, on by default in Debian's and most
// distributions' kernels, for processes outside a CPU cgroup of their own), a process's nice value only orders it among
// the processes of its own session, and the CPU is first shared equally between sessions. Every PostgreSQL backend
// starts a session of its own (postmaster children call setsid()), so a backend's nice value alone changes nothing:
// six backends in heavy statements were six equal groups beside the whole Tessera process (measured: Tessera's
// main thread waited 2.6 s on the run queue in 5 s, and a victim's find took 1-2 s). Its autogroup's nice value
// (/proc/<pid>/autogroup, sched(7)) is what weighs it against other sessions: both are set.
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../../../platform/logger.ts';

/**
 * A statement that has used more CPU time than this (ms) has its backend's CPU priority lowered. A find, an insert or
 * a join over an index uses well under a millisecond; 20 ms is a scan or a computation, and finding it at 20 ms
 * rather than 100 leaves a neighbour's burst of heavy statements a fifth of the time at the default priority.
 */
export const LONG_STATEMENT_MS = 20;
/** The nice value of a lowered backend (0 is the default; 19 the lowest priority). */
export const LOWERED_NICE = 19;

export type BackendPriority = {
  /** The CPU time (ms) the backend has used since it started; NaN when it cannot be read. */
  cpuMs: (pid: number) => number;
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

/** Whether the kernel shares the CPU between sessions first (autogroups); the file is absent on kernels without them. */
export function autogroupsEnabled(): boolean {
  try {
    return fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
  } catch {
    return false;
  }
}

/** Whether `pid` leads its own session, so its autogroup holds its session only (a PostgreSQL backend does). */
function leadsSession(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state ppid pgrp session ...
    const session = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    return session === pid;
  } catch {
    return false;
  }
}

/**
 * Sets the nice value of the backend's autogroup (its session's share of the CPU against other sessions); only for a
 * backend that leads its session, so no other process's share is touched. Throws when not permitted.
 */
function setAutogroupNice(pid: number, nice: number): void {
  if (leadsSession(pid)) fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
}

/** The autogroup nice value of `pid` (0 when there is none to read). */
export function autogroupNiceOf(pid: number): number {
  try {
    return Number(/nice (-?\d+)/.exec(fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * CPU time (ms) `pid` has used: the first field of /proc/<pid>/schedstat (ns, where the kernel keeps scheduler
 * statistics), otherwise utime + stime of /proc/<pid>/stat (in the 1/100 s ticks Linux reports to user space).
 */
export function cpuMsOf(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are the 14th and 15th fields of the line, the 12th and 13th after the command name.
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return NaN;
    }
  }
}

/**
 * Creates the priority control for backends of the server at `databaseUrl`; null when it is not on this machine or
 * the platform cannot see its processes (no /proc): then statements are not reprioritised.
 */
export function createBackendPriority(databaseUrl: string, logger: Logger): BackendPriority | null {
  if (!isLocalServer(databaseUrl) || !fs.existsSync('/proc/self/comm')) return null;
  let working = true;
  const autogroups = autogroupsEnabled();
  return {
    cpuMs: cpuMsOf,
    lower(pid) {
      if (!working || !isPostgresBackend(pid)) return false;
      try {
        os.setPriority(pid, LOWERED_NICE);
        if (autogroups) setAutogroupNice(pid, LOWERED_NICE);
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
        if (autogroups) setAutogroupNice(pid, 0);
        return os.getPriority(pid) === 0 && (!autogroups || autogroupNiceOf(pid) === 0);
      } catch {
        return false; // raising a priority needs privilege: the connection is closed instead
      }
    },
  };
}
