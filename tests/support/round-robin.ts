// A small round-robin HTTP proxy for multi-instance tests: what a load balancer in front of several instances of
// one role does. Each request goes to the next backend; a backend that refuses or drops the connection before
// answering is skipped and the request (its body buffered) is retried on the next one, as load balancers with
// retries do. Counts what each backend served.
import http from 'node:http';
import { freePort } from '../../platform/net.ts';

export type RoundRobin = {
  url: string;
  served: Map<string, number>;
  retried: () => number;
  close: () => Promise<void>;
};

/** Starts a proxy on a free loopback port in front of `backends` (base URLs). */
export async function startRoundRobin(backends: string[]): Promise<RoundRobin> {
  const served = new Map(backends.map((b) => [b, 0]));
  const agent = new http.Agent({ keepAlive: true });
  let next = 0;
  let retries = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      // This request's own turn through the backends: concurrent requests must not push it back onto a dead one.
      const first = next++;
      const attempt = (left: number) => {
        const backend = backends[(first + backends.length * 2 - left) % backends.length]!;
        const target = new URL(req.url ?? '/', backend);
        const headers = { ...req.headers, host: target.host };
        const up = http.request(target, { method: req.method, headers, agent }, (upRes) => {
          served.set(backend, (served.get(backend) ?? 0) + 1);
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        });
        up.on('error', (err: Error) => {
          if (res.headersSent) return void res.destroy();
          if (left > 1) {
            retries++;
            return attempt(left - 1);
          }
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { code: 'BAD_GATEWAY', message: `no backend answered: ${err.message}` } }));
        });
        up.end(body);
      };
      attempt(backends.length * 2);
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    retried: () => retries,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(() => r(undefined)));
    },
  };
}
