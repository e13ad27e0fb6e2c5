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
 * Sends `rate` requests a second to `t` for `seconds`, each at its scheduled time whatever the earlier ones take (an open
 * loop over keep-alive connections, as many as are in flight), and times each from its send to its answer's end: a
 * server that falls behind shows it in the latency, since later requests do not wait for it (no coordinated
 * omission). autocannon's `overallRate` was tried first: it sends in bursts, and against a server answering a constant
 * at once its p99 was 9-16 ms at 200/s (this caller: 1-3 ms).
 */
export async function steadyLoad(t: Target, seconds: number, rate: number): Promise<LoadFigures> {
  const url = new URL(t.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  const slowestPerSecond: number[] = [];
  let errors = 0;
  const start = performance.now();
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
            const ms = performance.now() - sent;
            latencies.push(ms);
            const second = Math.floor((sent - start) / 1000);
            slowestPerSecond[second] = Math.max(slowestPerSecond[second] ?? 0, Math.round(ms));
            if ((res.statusCode ?? 0) >= 300) errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(t.body);
    });
  const inFlight: Promise<void>[] = [];
  const n = Math.round(rate * seconds);
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(one());
  }
  await Promise.all(inFlight);
  const took = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 10) / 10;
  return { rps: latencies.length / took, p50: q(0.5), p99: q(0.99), errors, total: latencies.length, slowestPerSecond };
}
