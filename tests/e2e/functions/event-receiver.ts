// A local receiver of outbound event deliveries for the tests: records every request (headers and exact body) and
// answers what the test tells it per path. Not a test file itself.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../../support/wait-for.ts';

export type Received = { path: string; headers: Record<string, string>; body: string; at: number };
/** What a path answers: a status (and body), or nothing at all (`hang`) until the client gives up. */
export type Answer = { status: number; body?: string } | 'hang';

export type Receiver = {
  url: string;
  received: Received[];
  /** Sets what `path` answers from now on (default 200 `{"ok":true}`). */
  answer: (path: string, a: Answer | ((n: number) => Answer)) => void;
  /** The requests to `path` so far. */
  at: (path: string) => Received[];
  /** Waits until `path` got `count` requests (or the time is up). */
  waitFor: (path: string, count: number, timeoutMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
};

/** Starts a receiver on 127.0.0.1. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, Answer | ((n: number) => Answer)>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const a = answers.get(path) ?? { status: 200, body: '{"ok":true}' };
      const answer = typeof a === 'function' ? a(received.filter((r) => r.path === path).length) : a;
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body ?? '{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const at = (path: string) => received.filter((r) => r.path === path);
  return {
    url,
    received,
    answer: (path, a) => void answers.set(path, a),
    at,
    async waitFor(path, count, timeoutMs = 20_000) {
      return await waitFor(() => at(path).length >= count && at(path), {
        timeoutMs,
        message: `${count} deliveries to ${path}`,
      });
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Verifies a delivery with the independent Standard Webhooks library; answers the parsed body (throws when invalid). */
export function verified(
  secret: string,
  r: Received,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id']!,
    'webhook-timestamp': r.headers['webhook-timestamp']!,
    'webhook-signature': r.headers['webhook-signature']!,
  }) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };
}
