// Small network helpers shared by the launcher, the embedded database, tests and benchmarks.
import net from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; another process may still take it). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
