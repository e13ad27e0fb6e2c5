// Preloaded with `node --import` into a process under test: notes every TCP connection the process starts to
// anything but this machine's loopback, one line (`host:port`) per attempt in the file named by OUTBOUND_RECORD. Each
// line is written at once: the process may be stopped the next moment. Unix sockets are not noted.
import fs from 'node:fs';
import net from 'node:net';

const file = process.env.OUTBOUND_RECORD;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|::ffff:127\.\d+\.\d+\.\d+|\[::1\])$/i;

type Target = { host?: string; port?: number | string; path?: string };

/** Where a `Socket#connect(...)` call goes: `(options)`, `(port, host)`, `(path)` or net's normalized `[options, cb]`. */
function targetOf(args: unknown[]): Target {
  const first = args[0];
  if (Array.isArray(first)) return (first[0] ?? {}) as Target;
  if (typeof first === 'object' && first !== null) return first as Target;
  if (typeof first === 'string' && Number.isNaN(Number(first))) return { path: first };
  return { port: first as number, host: typeof args[1] === 'string' ? args[1] : undefined };
}

if (file) {
  const connect = net.Socket.prototype.connect as (...args: unknown[]) => net.Socket;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]): net.Socket {
    const t = targetOf(args);
    const host = t.host ?? 'localhost';
    if (!t.path && !LOOPBACK.test(host)) fs.appendFileSync(file, `${host}:${String(t.port)}\n`);
    return connect.apply(this, args);
  } as typeof net.Socket.prototype.connect;
}
