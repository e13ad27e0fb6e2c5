// P8-drain: async executions drained per second. N async invokes (`POST /edge/api/v1/invoke/:name?async=true`,
// X-Api-Key, 32 at a time) of a cheap 1-step function (one Transform); measured from the first enqueue until
// all N executions are `succeeded` (read from the database every 20 ms). Each execution is recorded in full
// (its row and its step log). The goal is absolute: the peer column holds the goal (1,000/s, issue 19) and
// ratio = drained/s ÷ 1,000 (issue 19's goal), so ratio ≥ 1 means met.
import pg from 'pg';
import { client } from '../../tests/support/http.ts';
import type { CustomCase, CustomFigures } from './types.ts';
import { dataProject } from './p1-p2-data.ts';
import { oneStepFunction } from '../lib/functions.ts';

const FUNCTION = 'p8-drain';
const GOAL_PER_S = 1000;
const PARALLEL = 32;

async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs: number,
  everyMs = 20,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const p8Drain: CustomCase = {
  kind: 'custom',
  id: 'P8-drain',
  title:
    'Async executions drained/s: N async invokes (?async=true, 32 at a time) of a 1-step function, first enqueue → all succeeded (N = 2,000; --quick: 200)',
  peer: 'goal: 1,000 executions/s (issue 19)',
  goal: '>= 1,000/s (ratio = drained/s / 1,000 >= 1)',
  async setup(ctx) {
    const n = ctx.quick ? 200 : 2000;
    const p = await dataProject(ctx);
    const call = client(ctx.tessera);
    await oneStepFunction(ctx, p.apiKey, FUNCTION, { ok: true, n: '{{ input.body.n }}' });
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    const counts = async (since: Date) => {
      const { rows } = await db.query<{ status: string; n: number }>(
        'select status, count(*)::int as n from function_executions where project_id = $1 and function_name = $2 and created_at >= $3 group by status',
        [p.projectId, FUNCTION, since],
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
    };
    const enqueue = async (i: number): Promise<string> => {
      const r = await call('POST', `/edge/api/v1/invoke/${FUNCTION}?async=true`, { apiKey: p.apiKey, body: { n: i } });
      if (r.status !== 202) throw new Error(`P8-drain enqueue: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.execution_id as string;
    };
    try {
      // Warm-up and a check that one execution runs and is recorded with its step log.
      const id = await enqueue(-1);
      await waitFor(
        async () =>
          (await call('GET', `/edge/api/v1/executions/${id}`, { apiKey: p.apiKey })).body?.execution?.status ===
          'succeeded'
            ? true
            : undefined,
        'the first async execution',
        30_000,
        50,
      );
      const events = await call('GET', `/edge/api/v1/executions/${id}/events`, { apiKey: p.apiKey });
      if (events.status !== 200 || events.body.events?.length !== 2)
        throw new Error(`P8-drain events: ${events.status} ${JSON.stringify(events.body)}`);
    } catch (err) {
      await db.end();
      throw err;
    }

    const run = async (): Promise<CustomFigures> => {
      const since = new Date(Date.now() - 1000);
      const before = await counts(since);
      const base = Object.values(before).reduce((a, b) => a + b, 0);
      const started = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < n) await enqueue(next++);
        }),
      );
      const enqueued = performance.now();
      const done = await waitFor(
        async () => {
          const c = await counts(since);
          return (c.succeeded ?? 0) + (c.failed ?? 0) - (before.succeeded ?? 0) - (before.failed ?? 0) >= n
            ? c
            : undefined;
        },
        `${n} executions to finish`,
        300_000,
      );
      const finished = performance.now();
      const total = Object.values(done).reduce((a, b) => a + b, 0) - base;
      const failed = (done.failed ?? 0) - (before.failed ?? 0);
      if (total !== n) throw new Error(`P8-drain: expected ${n} new executions, found ${total}`);
      const seconds = (finished - started) / 1000;
      const drained = n / seconds;
      const tessera = {
        drained_per_s: +drained.toFixed(1),
        enqueue_per_s: +(n / ((enqueued - started) / 1000)).toFixed(1),
        seconds: +seconds.toFixed(2),
        n,
        failed,
      };
      return {
        tessera,
        peer: { drained_per_s: GOAL_PER_S },
        ratio: drained / GOAL_PER_S,
        met: drained >= GOAL_PER_S && failed === 0,
      };
    };
    return { run, cleanup: async () => await db.end() };
  },
};
