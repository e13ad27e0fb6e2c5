// C1-client: what the typed client (packages/client) adds to a call, against bare fetch doing the same request.
// Both sides run the same find (`from('bench_items').select().eq('category', ...)` = POST /v1/find) one call at a
// time against the same Tessera, interleaved in batches; a second figure is the client's own CPU per call with a
// stub fetch (no network), which is the overhead itself.
import { createClient } from '../../packages/client/src/index.ts';
import { FIND_CATEGORY, FIND_TABLE, dataProject } from './p1-p2-data.ts';
import type { BenchCase } from './types.ts';

const us = (ns: bigint, n: number) => Number(ns / 1000n) / n;

export const c1Client: BenchCase = {
  id: 'C1-client',
  kind: 'custom',
  title: "Client overhead: from('bench_items').select().eq('category', …) vs bare fetch of POST /v1/find (sequential)",
  peer: 'bare fetch + JSON.parse of the same request',
  // The live round trips of both sides differ by less than this machine's noise (±20% between rounds); the client's
  // own cost per call, measured without a network, is the figure the goal is about.
  goal: 'client_own_us <= 50 µs per call; ratio to bare fetch reported',
  async setup(ctx) {
    const project = await dataProject(ctx);
    const client = createClient({ url: ctx.tessera, key: project.apiKey });
    const body = JSON.stringify({ table: FIND_TABLE, where: { category: { eq: FIND_CATEGORY } } });
    const bare = async () => {
      const res = await fetch(`${ctx.tessera}/v1/find`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': project.apiKey },
        body,
      });
      if (!res.ok) throw new Error(`find: ${res.status}`);
      return (await res.json()) as { rows: unknown[] };
    };
    const viaClient = async () => await client.from(FIND_TABLE).select().eq('category', FIND_CATEGORY);
    const [a, b] = [await bare(), await viaClient()];
    if (a.rows.length !== b.length || b.length === 0)
      throw new Error(`C1: the two sides disagree (${a.rows.length} vs ${b.length} rows)`);
    // The client alone: a stub fetch answering a canned find, so only the client's own work is timed.
    const canned = JSON.stringify(a);
    const stub = createClient({
      url: 'http://stub.invalid',
      key: project.apiKey,
      fetch: async () =>
        new Response(canned, { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': 'r' } }),
    });
    const calls = ctx.quick ? 300 : 2000;
    const time = async (fn: () => Promise<unknown>, n: number) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await fn();
      return us(process.hrtime.bigint() - t0, n);
    };
    return {
      async run() {
        // Interleaved batches so both sides see the same machine.
        let client = 0;
        let fetchUs = 0;
        const batches = 4;
        for (let i = 0; i < batches; i++) {
          fetchUs += await time(bare, calls / batches);
          client += await time(viaClient, calls / batches);
        }
        client /= batches;
        fetchUs /= batches;
        const cpu = await time(async () => await stub.from(FIND_TABLE).select().eq('category', FIND_CATEGORY), calls);
        const ratio = fetchUs / client;
        return {
          tessera: { client_us_per_call: client, client_own_us: cpu },
          peer: { fetch_us_per_call: fetchUs },
          ratio,
          met: cpu <= 50,
        };
      },
    };
  },
};
