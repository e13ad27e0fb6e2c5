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
//
// Where this process may write the kernel's CPU controller (cgroup v1's `cpu` hierarchy or cgroup v2 with `cpu`
// enabled at its root: as root, or given a delegated hierarchy), the lowered backends are moved into one CPU group of
// their own instead (LOWERED_GROUP, weighing what one nice-19 task weighs) and back to the group they came from when
// they are given their priority back. Each backend its own nice-19 session, six lowered backends were six entities
// next to the server's event loop and the victims' backends, and a well-behaved project's finds took twice as long at
// the 99th percentile (bench N1, six CPU-heavy statements on two cores: 10-18 ms against 5-6 ms alone); in one group,
// however many there are, they weigh as one and the finds' tail stayed at what it is alone (4.5-5.9 ms). The same held
// for plain busy loops (six in separate nice-19 sessions: 10-12.5 ms; two: 4-6 ms; six in one group: 5.2-5.3 ms): it
// is how the kernel shares the CPU between many low-weight entities, not PostgreSQL. A task in a CPU group is outside
// the autogroups, so the autogroup nice is then not set. docs/architecture.md, "Fair shares".
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

/** The CPU group every lowered backend of this machine is moved into (one group for all of them, every install's). */
export const LOWERED_GROUP = 'tessera-lowered';
/** Its weight: cgroup v1 `cpu.shares` (a nice-0 task weighs 1,024, a nice-19 one 15) and v2 `cpu.weight` (100, ~1.5). */
export const LOWERED_SHARES = 15;
export const LOWERED_WEIGHT = 1;

/** The CPU controller's hierarchy, as this process may write it: where lowered backends share one low-weight group. */
export type CpuGroup = {
  version: 1 | 2;
  /** The hierarchy's mount point. */
  mount: string;
  /** The lowered backends' group (a directory under the mount). */
  path: string;
};

/**
 * The CPU controller's hierarchy from a /proc/<pid>/mountinfo text: a cgroup v1 mount with the `cpu` controller, or a
 * cgroup2 mount whose root offers `cpu` (`cgroup.controllers`). Only a hierarchy mounted from its root (the mount's
 * root field `/`): inside a namespace that shows a sub-tree, the paths of /proc/<pid>/cgroup would not match it.
 */
export function cpuHierarchyOf(
  mountinfo: string,
  controllersOf: (mount: string) => string,
): { version: 1 | 2; mount: string } | null {
  let v2: { version: 2; mount: string } | null = null;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions] = right.split(' ');
    if (fields[3] !== '/' || !fields[4]) continue;
    const mount = fields[4].replace(/\\040/g, ' ');
    if (fstype === 'cgroup' && (superOptions ?? '').split(',').includes('cpu')) return { version: 1, mount };
    if (fstype === 'cgroup2' && !v2 && controllersOf(mount).split(/\s+/).includes('cpu')) v2 = { version: 2, mount };
  }
  return v2;
}

/** The path (under the hierarchy's mount) of the CPU group `pid` is in, from its /proc/<pid>/cgroup text. */
export function cpuGroupPathOf(cgroupText: string, version: 1 | 2): string | null {
  for (const line of cgroupText.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (version === 2 ? m[1] === '0' && m[2] === '' : m[2]!.split(',').includes('cpu')) return m[3]!;
  }
  return null;
}

/**
 * Makes (or finds) the lowered backends' group in the CPU controller's hierarchy and sets its weight; null when there
 * is no such hierarchy or this process may not write it (then lowering uses nice values and autogroups only).
 */
export function createLoweredGroup(mountinfo = '/proc/self/mountinfo', name = LOWERED_GROUP): CpuGroup | null {
  try {
    const found = cpuHierarchyOf(fs.readFileSync(mountinfo, 'utf8'), (mount) => {
      try {
        return fs.readFileSync(`${mount}/cgroup.controllers`, 'utf8');
      } catch {
        return '';
      }
    });
    if (!found) return null;
    const path = `${found.mount}/${name}`;
    if (found.version === 2) {
      // A child group has the cpu.* files only once the root hands the controller down.
      const subtree = fs.readFileSync(`${found.mount}/cgroup.subtree_control`, 'utf8').split(/\s+/);
      if (!subtree.includes('cpu')) fs.writeFileSync(`${found.mount}/cgroup.subtree_control`, '+cpu');
    }
    fs.mkdirSync(path, { recursive: true });
    if (found.version === 1) fs.writeFileSync(`${path}/cpu.shares`, String(LOWERED_SHARES));
    else fs.writeFileSync(`${path}/cpu.weight`, String(LOWERED_WEIGHT));
    return { ...found, path };
  } catch {
    return null;
  }
}

/** The file a process is moved into a group through (v1 `tasks`, a backend being one thread; v2 `cgroup.procs`). */
const joinFile = (group: CpuGroup, dir: string) => `${dir}/${group.version === 1 ? 'tasks' : 'cgroup.procs'}`;

/** Whether `pid` is in the lowered backends' group. */
export function inLoweredGroup(group: CpuGroup, pid: number): boolean {
  try {
    const at = cpuGroupPathOf(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'), group.version);
    return at !== null && `${group.mount}${at}` === group.path;
  } catch {
    return false;
  }
}

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
export function createBackendPriority(
  databaseUrl: string,
  logger: Logger,
  opts: { group?: CpuGroup | null } = {},
): BackendPriority | null {
  if (!isLocalServer(databaseUrl) || !fs.existsSync('/proc/self/comm')) return null;
  let working = true;
  const autogroups = autogroupsEnabled();
  let group = opts.group === undefined ? createLoweredGroup() : opts.group;
  /** The group each lowered backend came from (its server's), to move it back into. */
  const cameFrom = new Map<number, string>();
  const joinGroup = (pid: number): boolean => {
    if (!group) return false;
    try {
      if (!cameFrom.has(pid)) {
        const at = cpuGroupPathOf(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'), group.version);
        if (at === null) return false;
        // Backends of connections closed while lowered are not restored: forget the ones that are gone.
        if (cameFrom.size >= 1_000)
          for (const p of cameFrom.keys()) if (!fs.existsSync(`/proc/${p}`)) cameFrom.delete(p);
        cameFrom.set(pid, `${group.mount}${at}`);
      }
      fs.writeFileSync(joinFile(group, group.path), String(pid));
      return true;
    } catch (err) {
      // The hierarchy is there but this process may not move the server's processes: nice values only from now on.
      logger.info(
        { err: (err as Error).message },
        'data: cannot move lowered backends into a CPU group of their own; they are lowered by nice value only',
      );
      group = null;
      return false;
    }
  };
  return {
    cpuMs: cpuMsOf,
    lower(pid) {
      if (!working || !isPostgresBackend(pid)) return false;
      try {
        os.setPriority(pid, LOWERED_NICE);
        if (!joinGroup(pid) && autogroups) setAutogroupNice(pid, LOWERED_NICE);
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
        const from = cameFrom.get(pid);
        if (group && from !== undefined) {
          fs.writeFileSync(joinFile(group, from), String(pid));
          cameFrom.delete(pid);
        }
        if (autogroups) setAutogroupNice(pid, 0);
        return (
          os.getPriority(pid) === 0 &&
          (!autogroups || autogroupNiceOf(pid) === 0) &&
          (!group || !inLoweredGroup(group, pid))
        );
      } catch {
        return false; // raising a priority needs privilege: the connection is closed instead
      }
    },
  };
}
