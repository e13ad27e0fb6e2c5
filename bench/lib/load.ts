// Loads of a target: with autocannon, the way every benchmark tool measures requests per second (closed loop: each
// connection sends its next request when the last is answered), or as a steady caller (open loop: requests sent on a
// schedule whatever the answers take), the way a latency is measured for a caller that is not saturating the server.
import http from 'node:http';
import autocannon from 'autocannon';
import type { Target } from '../cases/types.ts';

/** What one load measured: mean requests/s, latency p50/p99 (ms), errors (failed or non-2xx) and requests answered. */
export type LoadFigures = {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  total: number;
  /** Steady loads: the slowest answer (ms) of each second's requests, by when they were sent (diagnosis). */
  slowestPerSecond?: number[];
  /** Steady loads: the failed requests by status (0 and the socket error: no answer), e.g. `{"503": 2, "0 ECONNRESET": 1}`. */
  failedByStatus?: Record<string, number>;
};

/** Drives `t` for `seconds` from `connections` connections at once, each sending its next request when the last is answered. */
export async function loadTarget(t: Target, seconds: number, connections = 32): Promise<LoadFigures> {
  const r = await autocannon({
    url: t.url,
    method: t.method,
    headers: t.headers,
    body: t.body,
    connections,
    duration: seconds,
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
    total: r.requests.total,
  };
}

/**
 * One request of a steady caller: when it was sent (performance.now() ms), how long it took (ms), whether it failed,
 * its status (0: no answer) and then the socket's error.
 */
export type SteadySample = { sent: number; ms: number; failed: boolean; status: number; error?: string };

/**
 * Sends `rate` requests a second to `t` until stopped, each at its scheduled time whatever the earlier ones take (an
 * open loop over keep-alive connections, as many as are in flight), and times each from its send to its answer's end:
 * a server that falls behind shows it in the latency, since later requests do not wait for it (no coordinated
 * omission). `stop` sends no more and answers every request's sample once the last is answered. autocannon's
 * `overallRate` was tried first: it sends in bursts, and against a server answering a constant at once its p99 was
 * 9-16 ms at 200/s (this caller: 1-3 ms).
 */
export function steadyStream(t: Target, rate: number): { stop: () => Promise<SteadySample[]> } {
  const url = new URL(t.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const samples: SteadySample[] = [];
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: t.method ?? 'GET',
          headers: t.headers,
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            samples.push({ sent, ms: performance.now() - sent, failed: status >= 300, status });
            resolve();
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        samples.push({ sent, ms: performance.now() - sent, failed: true, status: 0, error: err.code ?? err.message });
        resolve();
      });
      req.end(t.body);
    });
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  const start = performance.now();
  const sending = (async () => {
    for (let i = 0; !stopped; i++) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (stopped) break;
      const p = one();
      inFlight.add(p);
      void p.then(() => inFlight.delete(p));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await sending;
      await Promise.all(inFlight);
      agent.destroy();
      return samples;
    },
  };
}

/** The figures of the samples sent in [from, to) (performance.now() ms; all when left out). */
export function figuresOf(all: SteadySample[], from = -Infinity, to = Infinity): LoadFigures {
  const samples = all.filter((x) => x.sent >= from && x.sent < to);
  const first = Math.min(...samples.map((x) => x.sent));
  const slowestPerSecond: number[] = [];
  for (const x of samples) {
    const second = Math.floor((x.sent - first) / 1000);
    slowestPerSecond[second] = Math.max(slowestPerSecond[second] ?? 0, Math.round(x.ms));
  }
  const latencies = samples.map((x) => x.ms).sort((a, b) => a - b);
  const took = samples.length ? (Math.max(...samples.map((x) => x.sent + x.ms)) - first) / 1000 : 1;
  const q = (p: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 10) / 10;
  const failedByStatus: Record<string, number> = {};
  for (const x of samples) {
    if (!x.failed) continue;
    const key = x.error ? `${x.status} ${x.error}` : String(x.status);
    failedByStatus[key] = (failedByStatus[key] ?? 0) + 1;
  }
  return {
    failedByStatus,
    rps: latencies.length / took,
    p50: q(0.5),
    p99: q(0.99),
    errors: samples.filter((x) => x.failed).length,
    total: latencies.length,
    slowestPerSecond,
  };
}

/** A steady caller (steadyStream) for `seconds`: the figures of all its requests. */
export async function steadyLoad(t: Target, seconds: number, rate: number): Promise<LoadFigures> {
  const stream = steadyStream(t, rate);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return figuresOf(await stream.stop());
}
