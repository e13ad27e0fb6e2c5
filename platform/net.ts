// Small network helpers shared by the launcher, the embedded database, tests and benchmarks.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

/** Lowest port handed out; below it are the well-known and many services' usual ports. */
const LOWEST = 10_000;
/** Where Linux's ephemeral range starts unless configured otherwise (and below the IANA dynamic range of other OSes). */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const ATTEMPTS = 50;
/** Ports this process handed out, not handed out again (most recent last, bounded). */
const handedOut = new Set<number>();
const REMEMBERED = 4_096;

/** The first port of the kernel's ephemeral range, from which outgoing connections take their local ports. */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

/** Listens on `port` of 127.0.0.1 and closes again: the port it got (0: the kernel's pick), or undefined if taken. */
async function probe(port: number): Promise<number | undefined> {
  return await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err),
    );
    srv.listen(port, '127.0.0.1', () => {
      const got = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a process started next to listen on (another process may
 * still take it before then). It is picked at random below the kernel's ephemeral range, not by the kernel (bind to
 * port 0): every outgoing connection takes its local port from that range, so a port from it could be taken by any
 * connection opened in between (a pool's to PostgreSQL, a fetch), and the process given it would fail with
 * EADDRINUSE (seen in CI). A port this process already handed out is not handed out again. Where no port below the
 * range is free (or the range starts too low), the kernel picks.
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  if (high - LOWEST >= 1_000) {
    for (let i = 0; i < ATTEMPTS; i++) {
      const candidate = crypto.randomInt(LOWEST, high);
      if (handedOut.has(candidate)) continue;
      const port = await probe(candidate);
      if (port !== undefined) return remember(port);
    }
  }
  for (let i = 0; i < ATTEMPTS; i++) {
    const port = await probe(0);
    if (port !== undefined && !handedOut.has(port)) return remember(port);
  }
  throw new Error('No free TCP port on 127.0.0.1');
}

function remember(port: number): number {
  handedOut.add(port);
  if (handedOut.size > REMEMBERED) handedOut.delete(handedOut.values().next().value!);
  return port;
}
