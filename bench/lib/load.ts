// One load of a target with autocannon, the way every benchmark tool measures requests per second.
import autocannon from 'autocannon';
import type { Target } from '../cases/types.ts';

/** What one load measured: mean requests/s, latency p50/p99 (ms), errors (failed or non-2xx) and requests answered. */
export type LoadFigures = { rps: number; p50: number; p99: number; errors: number; total: number };

/** Drives `t` for `seconds` from `connections` connections at once. */
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
