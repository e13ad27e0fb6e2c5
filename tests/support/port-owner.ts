// Which process listens on a TCP port (Linux /proc). A test picks a free port (platform/net.ts freePort), closes it and
// hands it to a child process, which listens on it seconds later; in between another process (the other Jest
// worker's platform) may take the same port. Its Tessera then answers the child's readiness probe, the child dies with
// EADDRINUSE, and the test talks to another test's platform (CI: multi-instance answered 400 and 401 through its
// proxies, then found its data instance dead of EADDRINUSE). So readiness also asks that the port belongs to the
// child or one of its descendants (a split launcher's children).
import fs from 'node:fs';

/** Inodes of the sockets listening on `port` (IPv4 and IPv6), or undefined where /proc cannot tell. */
function listeningInodes(port: number): Set<string> | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  let read = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
      read = true;
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the tenth field.
      if (f.length > 9 && f[1]!.endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]!);
    }
  }
  return read ? inodes : undefined;
}

/** `pid` and every process below it. */
function descendants(pid: number): Set<number> {
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) is in parentheses and may hold spaces: the parent pid follows its last ')'.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [p, parent] of parentOf)
      if (!found.has(p) && found.has(parent)) {
        found.add(p);
        grew = true;
      }
  }
  return found;
}

/**
 * Whether `port` is listened on by `pid` or one of its descendants. True where /proc is not there to ask (not Linux):
 * the check is a guard, never a reason to fail a start it cannot judge.
 */
export function portOwnedBy(pid: number, port: number): boolean {
  const inodes = listeningInodes(port);
  if (inodes === undefined || !fs.existsSync(`/proc/${pid}/fd`)) return true;
  if (inodes.size === 0) return false;
  for (const p of descendants(pid)) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${p}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${p}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return true;
      } catch {
        // closed meanwhile
      }
    }
  }
  return false;
}
