// The plan's function limits (issue 28), over REST and GraphQL on a started platform whose accounts are on the free
// plan: cron's shortest interval and number of jobs, concurrent runs per project, async invokes per tree of runs, and
// the usage the operator sees. Each: at the limit, past it (a clear refusal, or a recorded failure), and after the
// operator raises it (works again). Limits are changed as the operator would (tests/support/plans.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { expectError, startEdgeWorld, type EdgeWorld } from './functions-helpers.ts';
import { setPlanLimits } from '../../support/plans.ts';
import { waitFor } from '../../support/wait-for.ts';

const E = '/edge/api/v1';
let w: EdgeWorld;
let held: http.ServerResponse[] = [];
let heldUrl: string;
let server: http.Server;
let db: pg.Client;

const api = (method: string, path: string, body?: unknown) =>
  w.call(method, path, { apiKey: w.apiKey, ...(body === undefined ? {} : { body }) });

const releaseHeld = () => {
  for (const r of held) r.writeHead(200, { 'content-type': 'application/json' }).end('{"released": true}');
  held = [];
};

/** The project's executions of `fn` (straight from the functions tables: counts, not pages). */
const executionsOf = async (fn: string) =>
  (
    await db.query<{ id: string; status: string; error: { code?: string } | null; root_id: string | null }>(
      'select id, status, error, root_id from function_executions where project_id = $1 and function_name = $2',
      [w.projectId, fn],
    )
  ).rows;

const settled = async (fn: string) =>
  await waitFor(async () => (await executionsOf(fn)).every((e) => e.status === 'succeeded' || e.status === 'failed'), {
    message: `every execution of ${fn} to end`,
    timeoutMs: 60_000,
  });

beforeAll(async () => {
  // A server that holds every request until the test releases it: runs that stay running as long as the test says.
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  heldUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`;
  w = await startEdgeWorld({ TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' });
  db = new pg.Client({ connectionString: w.p.tessera!.config.databaseUrl! });
  await db.connect();
  const fn = async (name: string, steps: unknown[]) =>
    expect((await api('POST', `${E}/functions`, { name, steps })).status).toBe(201);
  await fn('tick', [{ name: 'out', kind: 'Transform', expression: { at: '{{ now() }}' } }]);
  await fn('hold', [{ name: 'wait', kind: 'HTTP', request: { method: 'POST', url: heldUrl, body: {} } }]);
  // Each run invokes itself twice, asynchronously: 2^9 - 1 runs over its 8 levels without a bound.
  await fn('boom', [
    { name: 'left', kind: 'Invoke', function: 'boom', async: true, input: {} },
    { name: 'right', kind: 'Invoke', function: 'boom', async: true, input: {} },
  ]);
  // Evasion: a synchronous Invoke of the fan-out (its async invokes still count against this run's tree).
  await fn('relay', [{ name: 'call', kind: 'Invoke', function: 'boom', input: {} }]);
}, 120_000);

afterAll(async () => {
  releaseHeld();
  await db?.end();
  await w?.p.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

describe('cron: the shortest interval and the number of jobs', () => {
  const job = (name: string, schedule: string, enabled = false) =>
    api('POST', `${E}/cron`, { name, schedule, function: 'tick', enabled });

  it('refuses a schedule more frequent than the plan allows (seconds fields count), accepts one at the minimum', async () => {
    const fast = await job('every-5s', '*/5 * * * * *');
    expectError(fast, 409, 'PLAN_LIMIT_REACHED', /every 5 s.*every 10 s.*min_cron_interval_seconds/);
    expect(fast.body.error.details).toEqual({ limit: 'min_cron_interval_seconds', max: 10 });
    // Irregular: most gaps are long, one is 5 s.
    expectError(await job('uneven', '0,5 * * * * *'), 409, 'PLAN_LIMIT_REACHED', /every 5 s/);
    const atLimit = await job('every-10s', '*/10 * * * * *');
    expect(atLimit.status).toBe(201);
    // An update to a faster schedule is refused the same way; the job keeps its schedule.
    const faster = await api('PUT', `${E}/cron/${atLimit.body.cron_job.id}`, { schedule: '* * * * * *' });
    expectError(faster, 409, 'PLAN_LIMIT_REACHED', /min_cron_interval_seconds/);
    const jobs = (await api('GET', `${E}/cron`)).body.cron_jobs as { name: string; schedule: string }[];
    expect(jobs.find((c) => c.name === 'every-10s')?.schedule).toBe('*/10 * * * * *');
    // Minute schedules are measured too.
    expect((await job('minutely', '* * * * *')).status).toBe(201);
  });

  it('refuses a job past max_cron_jobs, also when two creates race for the last place, until the operator raises it', async () => {
    const existing = (await api('GET', `${E}/cron`)).body.cron_jobs.length as number;
    for (let i = existing; i < 4; i++) expect((await job(`fill-${i}`, '0 * * * *')).status).toBe(201);
    // One place left, two creates at once: exactly one gets it.
    const race = await Promise.all([job('race-a', '0 * * * *'), job('race-b', '0 * * * *')]);
    expect(race.map((r) => r.status).sort()).toEqual([201, 409]);
    const refused = race.find((r) => r.status === 409)!;
    expectError(refused, 409, 'PLAN_LIMIT_REACHED', /free plan allows 5 cron jobs per project \(max_cron_jobs\)/);
    expect(refused.body.error.details).toEqual({ limit: 'max_cron_jobs', max: 5 });
    expectError(await job('sixth', '0 * * * *'), 409, 'PLAN_LIMIT_REACHED', /max_cron_jobs/);
    // Another project of the same tenant has its own count.
    const elsewhere = await w.call('POST', `${E}/functions`, {
      apiKey: w.other.apiKey,
      body: { name: 'tick', steps: [{ name: 'out', kind: 'Transform', expression: 1 }] },
    });
    expect(elsewhere.status).toBe(201);
    const otherJob = await w.call('POST', `${E}/cron`, {
      apiKey: w.other.apiKey,
      body: { name: 'mine', schedule: '0 * * * *', function: 'tick', enabled: false },
    });
    expect(otherJob.status).toBe(201);

    await setPlanLimits(w.p, 'free', { max_cron_jobs: 7, min_cron_interval_seconds: 1 });
    expect((await job('sixth', '0 * * * *')).status).toBe(201);
    expect((await job('every-second', '* * * * * *')).status).toBe(201);
    const all = (await api('GET', `${E}/cron`)).body.cron_jobs as { id: string; name: string }[];
    expect((await api('DELETE', `${E}/cron?id=${all.find((c) => c.name === 'every-second')!.id}`)).status).toBe(204);
  });

  it('spaces the ticks of a job saved before the plan got stricter: it runs at most every min_cron_interval_seconds', async () => {
    await setPlanLimits(w.p, 'free', { max_cron_jobs: null, min_cron_interval_seconds: 1 });
    const created = await job('legacy', '* * * * * *', true);
    expect(created.status).toBe(201);
    await waitFor(async () => (await cronRuns('legacy')).length >= 2, { message: 'two every-second runs' });
    await setPlanLimits(w.p, 'free', { min_cron_interval_seconds: 3 });
    const since = new Date();
    await waitFor(async () => (await cronRuns('legacy', since)).length >= 3, {
      message: 'three runs under the stricter plan',
      timeoutMs: 30_000,
    });
    const times = (await cronRuns('legacy', since)).map((t) => t.getTime());
    // Ticks come every second; runs only when 3 s have passed since the previous run (a little less between the
    // runs' own start times, which follow their ticks by a statement or two).
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(2_000);
    expect((await api('PUT', `${E}/cron/${created.body.cron_job.id}`, { enabled: false })).status).toBe(200);
    await setPlanLimits(w.p, 'free', { max_cron_jobs: 5, min_cron_interval_seconds: 10 });
  });

  const cronRuns = async (name: string, since = new Date(0)) =>
    (
      await db.query<{ started_at: Date }>(
        "select started_at from function_executions where project_id = $1 and trigger = 'cron' and trigger_ref = $2 and started_at > $3 order by started_at",
        [w.projectId, name, since],
      )
    ).rows.map((r) => r.started_at);
});

describe('concurrent runs per project (max_concurrent_function_runs)', () => {
  const usage = async (opts: { apiKey?: string; token?: string }, projectId = w.projectId) =>
    await w.call('POST', '/graphql', {
      ...opts,
      body: {
        query: 'query($id: ID!) { project(id: $id) { functionUsage { runsThisMonth runningNow cronJobs } } }',
        variables: { id: projectId },
      },
    });

  it('answers a synchronous invoke past the limit 429 with Retry-After, queues async work until a slot frees, and lets more run once raised', async () => {
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 2 });
    const first = [api('POST', `${E}/invoke/hold`, {}), api('POST', `${E}/invoke/hold`, {})];
    await waitFor(() => held.length === 2, { message: 'two runs holding both slots' });

    const refused = await api('POST', `${E}/invoke/hold`, {});
    expectError(refused, 429, 'RATE_LIMITED', /free plan allows 2 function runs at once.*max_concurrent_function_runs/);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.details).toMatchObject({ limit: 'max_concurrent_function_runs', max: 2 });
    // The other project of the tenant has slots of its own.
    await w.call('POST', `${E}/functions`, {
      apiKey: w.other.apiKey,
      body: { name: 'quick', steps: [{ name: 'out', kind: 'Transform', expression: 1 }] },
    });
    expect((await w.call('POST', `${E}/invoke/quick`, { apiKey: w.other.apiKey, body: {} })).status).toBe(200);

    // The operator's view: both running now.
    const seen = await usage({ token: w.token });
    expect(seen.body.data.project.functionUsage).toMatchObject({ runningNow: 2 });

    // Async work waits in line: queued, not failed, not lost.
    const queued = await Promise.all([1, 2, 3].map(() => api('POST', `${E}/invoke/hold?async=true`, {})));
    expect(queued.map((r) => r.status)).toEqual([202, 202, 202]);
    const ids = queued.map((r) => r.body.execution_id as string);
    // A fixed wait that proves something does not happen: with both slots held, no queued run starts (their jobs
    // find no free slot and put them back in line).
    await new Promise((r) => setTimeout(r, 2_000));
    expect(held.length).toBe(2);
    for (const id of ids) expect((await api('GET', `${E}/executions/${id}`)).body.execution.status).toBe('queued');
    // A cron tick meanwhile waits in line too (a queued execution of trigger cron), and is not skipped or failed.
    await setPlanLimits(w.p, 'free', { min_cron_interval_seconds: 1, max_cron_jobs: null });
    const tick = await api('POST', `${E}/cron`, { name: 'busy-tick', schedule: '* * * * * *', function: 'tick' });
    expect(tick.status).toBe(201);
    const queuedTick = await waitFor(
      async () =>
        (
          await db.query<{ id: string }>(
            "select id from function_executions where project_id = $1 and trigger = 'cron' and trigger_ref = 'busy-tick' and status in ('held', 'queued')",
            [w.projectId],
          )
        ).rows[0]?.id,
      { message: 'a cron tick waiting in line' },
    );
    expect((await api('PUT', `${E}/cron/${tick.body.cron_job.id}`, { enabled: false })).status).toBe(200);
    ids.push(queuedTick);
    expect(held.length).toBe(2);

    // Freed: the queued runs start (at most two at a time), and all end succeeded.
    releaseHeld();
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    await waitFor(
      async () => {
        if (held.length > 2) throw new Error(`${held.length} runs at once past a limit of 2`);
        releaseHeld();
        const states = await Promise.all(
          ids.map(async (id) => (await api('GET', `${E}/executions/${id}`)).body.execution.status),
        );
        return states.every((s) => s === 'succeeded');
      },
      { message: 'the queued runs to succeed', timeoutMs: 30_000, intervalMs: 100 },
    );

    await setPlanLimits(w.p, 'free', { min_cron_interval_seconds: 10 });
    // Raised by the operator: three at once run.
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 3 });
    const three = [1, 2, 3].map(() => api('POST', `${E}/invoke/hold`, {}));
    await waitFor(() => held.length === 3, { message: 'three runs at once' });
    releaseHeld();
    expect((await Promise.all(three)).map((r) => r.status)).toEqual([200, 200, 200]);
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 10 });
  });

  it('bounds a function that calls its own public webhook in a loop (a new tree each hop) by the concurrency cap', async () => {
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 2 });
    const url = `${w.p.url}/webhooks/${w.projectId}/loop`;
    expect(
      (
        await api('POST', `${E}/functions`, {
          name: 'loop',
          steps: [{ name: 'again', kind: 'HTTP', request: { method: 'POST', url, body: {} } }],
        })
      ).status,
    ).toBe(201);
    expect((await api('POST', `${E}/webhooks`, { slug: 'loop', function: 'loop' })).status).toBe(201);
    // Each hop holds its slot while it waits for the next: the third hop finds none (429) and the chain unwinds.
    const res = await api('POST', `${E}/invoke/loop`, {});
    expect(res.status).toBeLessThan(600);
    await settled('loop');
    // The invoke's run and the first webhook hop ran; the second hop was refused before it started.
    expect((await executionsOf('loop')).length).toBe(2);
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 10 });
  });

  it('shows the usage to the project key and its tenant, never to another project, tenant or an anonymous caller', async () => {
    const mine = await usage({ apiKey: w.apiKey });
    expect(mine.status).toBe(200);
    const u = mine.body.data.project.functionUsage;
    expect(u.runningNow).toBe(0);
    expect(u.cronJobs).toBeGreaterThanOrEqual(5);
    await waitFor(async () => (await usage({ apiKey: w.apiKey })).body.data.project.functionUsage.runsThisMonth >= 8, {
      message: 'the month’s runs counted',
    });
    expect((await usage({ token: w.token })).body.data.project.functionUsage.cronJobs).toBe(u.cronJobs);

    // Another project's key, another tenant, nobody: refused, nothing of the usage shown.
    const otherKey = await usage({ apiKey: w.other.apiKey });
    expect(otherKey.body.data?.project ?? null).toBeNull();
    expect(otherKey.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const email = `stranger-${Date.now()}@example.com`;
    await w.call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
    const stranger = (
      await w.call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })
    ).body.access_token as string;
    const strangers = await usage({ token: stranger });
    expect(strangers.body.data?.project ?? null).toBeNull();
    expect(strangers.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const anonymous = await usage({});
    expect(anonymous.body.data?.project ?? null).toBeNull();
    expect(JSON.stringify(anonymous.body)).not.toContain('runsThisMonth":');
  });
});

describe('async fan-out per tree of runs (max_async_invokes_per_run)', () => {
  it('stops the exponential self-invoke at the bound: the tree has at most bound + 1 runs, the refusal recorded', async () => {
    await setPlanLimits(w.p, 'free', { max_async_invokes_per_run: 6 });
    const res = await api('POST', `${E}/invoke/boom`, {});
    expect(res.status).toBe(200);
    await waitFor(async () => (await executionsOf('boom')).length >= 7, { message: 'the tree to grow' });
    await settled('boom');
    const runs = await executionsOf('boom');
    expect(runs.length).toBeLessThanOrEqual(7);
    expect(runs.length).toBe(7);
    // Every child belongs to the root's tree; the runs that hit the bound failed with the plan's code.
    const root = runs.find((r) => r.root_id === null)!;
    expect(runs.filter((r) => r.root_id !== null).every((r) => r.root_id === root.id)).toBe(true);
    const refused = runs.filter((r) => r.status === 'failed');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.error?.code).toBe('PLAN_LIMIT_REACHED');
    const events = (await api('GET', `${E}/executions/${refused[0]!.id}/events`)).body.events as {
      type: string;
      error: { code: string; message: string } | null;
    }[];
    const failedStep = events.find((e) => e.type === 'failed')!;
    expect(failedStep.error).toMatchObject({ code: 'PLAN_LIMIT_REACHED' });
    expect(failedStep.error!.message).toMatch(/free plan allows 6 async invokes per run.*max_async_invokes_per_run/);
  });

  it('counts a synchronous Invoke of a fanning-out function against the caller’s tree (no evasion)', async () => {
    await db.query('delete from function_executions where project_id = $1', [w.projectId]);
    const res = await api('POST', `${E}/invoke/relay`, {});
    expect(res.status).toBe(200);
    await waitFor(async () => (await executionsOf('boom')).length >= 7, { message: 'the tree to grow' });
    await settled('boom');
    // relay (the root) + boom run synchronously inside it + 6 async invokes.
    expect((await executionsOf('boom')).length).toBe(7);
    expect((await executionsOf('relay')).length).toBe(1);
  });

  it('lets the tree grow further once the operator raises the bound', async () => {
    await db.query('delete from function_executions where project_id = $1', [w.projectId]);
    await setPlanLimits(w.p, 'free', { max_async_invokes_per_run: 14 });
    expect((await api('POST', `${E}/invoke/boom`, {})).status).toBe(200);
    await waitFor(async () => (await executionsOf('boom')).length >= 15, { message: 'the larger tree' });
    await settled('boom');
    expect((await executionsOf('boom')).length).toBe(15);
    await setPlanLimits(w.p, 'free', { max_async_invokes_per_run: 100 });
  });
});

describe('queued runs per project (max_queued_function_runs)', () => {
  it('refuses an async invoke past the bound 429 with Retry-After (nothing saved), fails an async Invoke step so, and queues more once raised', async () => {
    await db.query('delete from function_executions where project_id = $1', [w.projectId]);
    // One run at a time, held: the async invokes below stay queued.
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 1, max_queued_function_runs: 3 });
    const first = api('POST', `${E}/invoke/hold`, {});
    await waitFor(() => held.length === 1, { message: 'a run holding the only slot' });

    // At the bound (sent together: one batch, counted one by one).
    const queued = await Promise.all([1, 2, 3].map(() => api('POST', `${E}/invoke/tick?async=true`, {})));
    expect(queued.map((r) => r.status)).toEqual([202, 202, 202]);
    // Past it: refused, and no execution saved for it.
    const refused = await api('POST', `${E}/invoke/tick?async=true`, {});
    expectError(
      refused,
      429,
      'RATE_LIMITED',
      /free plan allows 3 queued function runs per project \(max_queued_function_runs\).*ask the operator to raise it/,
    );
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.details).toMatchObject({ limit: 'max_queued_function_runs', max: 3 });
    expect((await executionsOf('tick')).length).toBe(3);
    // Another project's queue is its own.
    await w.call('POST', `${E}/functions`, {
      apiKey: w.other.apiKey,
      body: { name: 'queued-elsewhere', steps: [{ name: 'out', kind: 'Transform', expression: 1 }] },
    });
    const elsewhere = await w.call('POST', `${E}/invoke/queued-elsewhere?async=true`, {
      apiKey: w.other.apiKey,
      body: {},
    });
    expect(elsewhere.status).toBe(202);

    // Raised by the operator: one more queues.
    await setPlanLimits(w.p, 'free', { max_queued_function_runs: 4 });
    expect((await api('POST', `${E}/invoke/tick?async=true`, {})).status).toBe(202);
    expect((await api('POST', `${E}/invoke/tick?async=true`, {})).status).toBe(429);

    releaseHeld();
    expect((await first).status).toBe(200);
    await settled('tick');
    expect((await executionsOf('tick')).map((e) => e.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    await setPlanLimits(w.p, 'free', { max_concurrent_function_runs: 10 });

    // An async Invoke step finding the queue full fails with the refusal's code (the run is recorded failed).
    await setPlanLimits(w.p, 'free', { max_queued_function_runs: 0 });
    expect(
      (
        await api('POST', `${E}/functions`, {
          name: 'spawn',
          steps: [{ name: 'later', kind: 'Invoke', function: 'tick', async: true, input: {} }],
        })
      ).status,
    ).toBe(201);
    await api('POST', `${E}/invoke/spawn`, {});
    const [spawned] = await executionsOf('spawn');
    expect(spawned).toMatchObject({ status: 'failed', error: { code: 'RATE_LIMITED' } });
    expect(JSON.stringify(spawned!.error)).toMatch(/max_queued_function_runs/);
    expect((await executionsOf('tick')).length).toBe(4);
    await setPlanLimits(w.p, 'free', { max_queued_function_runs: 50 });
  });
});
