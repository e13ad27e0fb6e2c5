// A stand-in for an internal service (a cloud metadata endpoint, an admin port) for the outbound-request attack tables:
// it listens on loopback and counts the requests that reach it, which must stay 0.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type InternalServer = { port: number; hits: () => number; close: () => Promise<void> };

/** Starts the internal service on 127.0.0.1 (a free port); it answers `internal secrets` to anything. */
export async function startInternalServer(): Promise<InternalServer> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.end('internal secrets');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
