// Cron on real PostgreSQL with two instances of the functions subgraph sharing one database (as two
// worker processes would): every tick runs exactly once, and a disabled job stops.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import type { RunningSubgraph } from '../../../platform/subgraph.ts';
import { createTestDatabase, stopOwnServer } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { projectContext, startFunctionsSubgraph } from './functions-fixtures.ts';

describe('cron with two instances', () => {
  let db: { url: string; drop: () => Promise<void> };
  let a: RunningSubgraph;
  let b: RunningSubgraph;
  const projectId = crypto.randomUUID();
  const ctx = projectContext('cron-test', projectId);

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startFunctionsSubgraph(db.url);
    b = await startFunctionsSubgraph(db.url);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    // Pools finish closing their connections in the background: wait for them before dropping the database.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const others = async () =>
      (
        await c.query(
          'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        )
      ).rows[0].n as number;
    await waitFor(async () => (await others()) === 0, {
      timeoutMs: 15_000,
      intervalMs: 100,
      message: 'the pools to close',
    }).catch(() => undefined); // drop() reports what is left
    await c.end();
    await db?.drop();
    await stopOwnServer();
  });

  const run = async (s: RunningSubgraph, query: string, variables: Record<string, unknown> = {}) => {
    const r = await s.execute(query, variables, ctx);
    if (r.errors?.length) throw new Error(JSON.stringify(r.errors));
    return r.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  };

  it('runs each tick exactly once across both instances, shows the next runs, and stops when disabled', async () => {
    await run(a, 'mutation($input: EdgeFunctionInput!) { createEdgeFunction(input: $input) { id } }', {
      input: {
        name: 'tick',
        steps: [{ name: 'out', kind: 'Transform', expression: { at: '{{ now() }}', job: '{{ input.body.job }}' } }],
      },
    });
    const created = await run(
      b,
      'mutation($input: CronJobInput!) { createCronJob(input: $input) { id nextRuns enabled } }',
      {
        input: {
          name: 'every-2s',
          schedule: '*/2 * * * * *',
          timezone: 'UTC',
          function: 'tick',
          input: { job: 'every-2s' },
        },
      },
    );
    const cron = created.createCronJob;
    expect(cron.nextRuns).toHaveLength(5);
    expect(Date.parse(cron.nextRuns[1]) - Date.parse(cron.nextRuns[0])).toBe(2000);

    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const runsOf = async (job: string, after = new Date(0)) =>
        (
          await c.query<{ started_at: Date; output: { job: string } }>(
            "select started_at, output from function_executions where project_id = $1 and trigger = 'cron' and trigger_ref = $2 and started_at > $3 order by started_at",
            [projectId, job, after],
          )
        ).rows;
      const rows = await waitFor(
        async () => {
          const r = await runsOf('every-2s');
          return r.length >= 3 && r;
        },
        { timeoutMs: 20_000, message: 'three runs of every-2s' },
      );
      expect(rows.every((r) => r.output.job === 'every-2s')).toBe(true);
      // One run per 2-second tick: no two runs fall in the same tick.
      const ticks = rows.map((r) => Math.floor(r.started_at.getTime() / 2000));
      expect(new Set(ticks).size).toBe(rows.length);

      await run(
        a,
        'mutation($id: ID!, $input: CronJobUpdateInput!) { updateCronJob(id: $id, input: $input) { enabled } }',
        { id: cron.id, input: { enabled: false } },
      );
      const disabledAt = (await c.query<{ t: Date }>('select clock_timestamp() as t')).rows[0]!.t;
      // Stopped: a marker job on the same schedule runs on two ticks after the disable, and every-2s on none of them.
      const marker = await run(b, 'mutation($input: CronJobInput!) { createCronJob(input: $input) { id } }', {
        input: {
          name: 'marker',
          schedule: '*/2 * * * * *',
          timezone: 'UTC',
          function: 'tick',
          input: { job: 'marker' },
        },
      });
      await waitFor(async () => (await runsOf('marker', disabledAt)).length >= 2, {
        timeoutMs: 20_000,
        message: 'two runs of the marker job',
      });
      expect(await runsOf('every-2s', disabledAt)).toEqual([]);
      await run(a, 'mutation($id: ID!) { deleteCronJob(id: $id) }', { id: marker.createCronJob.id });
      // No tick job is left scheduled (one re-saved by a run in flight at the disable cancels itself on its next tick).
      const tickJobs = async () =>
        Number((await c.query("select count(*) from agenda_jobs where name = 'functions.cron.tick'")).rows[0].count);
      await waitFor(async () => (await tickJobs()) === 0, {
        timeoutMs: 15_000,
        message: 'no functions.cron.tick job left',
      });
    } finally {
      await c.end();
    }
    const listed = await run(a, '{ cronJobs { name enabled nextRuns lastRunAt } }');
    expect(listed.cronJobs).toEqual([
      { name: 'every-2s', enabled: false, nextRuns: [], lastRunAt: expect.any(String) },
    ]);
  }, 40_000);

  it('refuses every operation to other principals', async () => {
    const anon = await a.execute('{ cronJobs { id } }', {}, { requestId: 'x', principal: { kind: 'anonymous' } });
    expect(anon.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const user = await a.execute(
      '{ cronJobs { id } }',
      {},
      { requestId: 'x', principal: { kind: 'user', projectId, userId: 'u', clientId: 'c', scopes: [], mfa: false } },
    );
    expect(user.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const receive = await a.execute(
      'mutation { _receiveWebhook(projectId: "x", slug: "y", request: { method: "POST", headers: {}, query: {}, rawBody: "" }) { status } }',
      {},
      ctx,
    );
    expect(receive.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
