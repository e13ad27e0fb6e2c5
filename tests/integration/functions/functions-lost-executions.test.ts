// An execution a worker claimed and never finished (its process crashed mid-run) must not look alive
// forever: the sweep marks it failed with WORKER_LOST once it is past its function's timeout plus a grace.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { createLogger } from '../../../platform/logger.ts';
import type { RunningSubgraph } from '../../../platform/subgraph.ts';
import { createExecutionService } from '../../../subgraphs/functions/services/executions.ts';
import { createHotSql, createSql } from '../../../subgraphs/functions/services/sql.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { openFunctionsTables, projectContext, startFunctionsSubgraph } from './functions-fixtures.ts';

let db: { url: string; drop: () => Promise<void> };
let sub: RunningSubgraph;
let tables: Awaited<ReturnType<typeof openFunctionsTables>>;
let client: pg.Client;
const projectId = crypto.randomUUID();
const ctx = projectContext('lost-test', projectId);

beforeAll(async () => {
  db = await createTestDatabase();
  sub = await startFunctionsSubgraph(db.url);
  tables = await openFunctionsTables(db.url);
  client = tables.client;
}, 60_000);

afterAll(async () => {
  await tables?.close();
  await sub?.close();
  await db?.drop();
});

it('marks executions left running past their timeout as failed (WORKER_LOST), and leaves live ones alone', async () => {
  const made = await sub.execute(
    'mutation($input: EdgeFunctionInput!) { createEdgeFunction(input: $input) { id } }',
    {
      input: { name: 'slow', timeoutMs: 5000, steps: [{ name: 'out', kind: 'Transform', expression: { ok: true } }] },
    },
    ctx,
  );
  expect(made.errors).toBeUndefined();
  const functionId = (made.data as { createEdgeFunction: { id: string } }).createEdgeFunction.id;
  const insert = async (status: string, startedSecondsAgo: number, fn: string | null = functionId) => {
    const id = crypto.randomUUID();
    await client.query(
      `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, status, created_at, started_at)
       values ($1, $2, $3, 'slow', 1, 'function', $4, now() - make_interval(secs => $5), now() - make_interval(secs => $5))`,
      [id, projectId, fn, status, startedSecondsAgo],
    );
    return id;
  };
  const lost = await insert('running', 120); // 5 s timeout + 60 s grace: long gone
  const live = await insert('running', 30); // may still be running
  const orphan = await insert('running', 200, null); // function deleted: the longest timeout (300 s) + grace applies
  const orphanLost = await insert('running', 400, null);
  const done = await insert('succeeded', 600);

  const hot = createHotSql(db.url, createLogger('silent'));
  const executions = createExecutionService({ sql: createSql(tables.orm), hot });
  expect(await executions.sweepLost(60_000)).toBe(2);
  await hot.close();
  const { rows } = await client.query<{
    id: string;
    status: string;
    error: { code: string } | null;
    duration_ms: number | null;
  }>('select id, status, error, duration_ms from function_executions where project_id = $1', [projectId]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(byId.get(lost)).toMatchObject({ status: 'failed', error: { code: 'WORKER_LOST' } });
  expect(byId.get(lost)!.duration_ms).toBeGreaterThan(100_000);
  expect(byId.get(orphanLost)).toMatchObject({ status: 'failed', error: { code: 'WORKER_LOST' } });
  expect(byId.get(live)!.status).toBe('running');
  expect(byId.get(orphan)!.status).toBe('running');
  expect(byId.get(done)!.status).toBe('succeeded');
});

it('queues again an execution released long ago whose job is gone, which then runs once; leaves recent ones to their job', async () => {
  const made = await sub.execute(
    'mutation($input: EdgeFunctionInput!) { createEdgeFunction(input: $input) { id } }',
    {
      input: { name: 'stale', steps: [{ name: 'out', kind: 'Transform', expression: { ran: true } }] },
    },
    ctx,
  );
  expect(made.errors).toBeUndefined();
  const functionId = (made.data as { createEdgeFunction: { id: string } }).createEdgeFunction.id;
  const insert = async (createdSecondsAgo: number) => {
    const id = crypto.randomUUID();
    await client.query(
      `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, status, input, created_at)
       values ($1, $2, $3, 'stale', 1, 'function', 'queued', '{"body": {}}'::jsonb, now() - make_interval(secs => $4))`,
      [id, projectId, functionId, createdSecondsAgo],
    );
    return id;
  };
  const lost = await insert(11 * 60); // its job is gone (no job names it)
  const recent = await insert(30); // still its job's to run
  // Run the subgraph's sweep now (it runs every minute): a job of that name, queued through the shared jobs table.
  const { createScheduler } = await import('../../../platform/scheduler.ts');
  const { SWEEP_JOB } = await import('../../../subgraphs/functions/jobs/index.ts');
  const other = createScheduler({ url: db.url, name: 'test-enqueuer', logger: createLogger('silent') });
  try {
    await other.enqueue(SWEEP_JOB, {});
  } finally {
    await other.stop();
  }
  const status = async (id: string) =>
    (
      await client.query<{ status: string; output: unknown }>(
        'select status, output from function_executions where id = $1',
        [id],
      )
    ).rows[0]!;
  await waitFor(async () => (await status(lost)).status === 'succeeded', {
    timeoutMs: 20_000,
    intervalMs: 100,
    message: 'the lost execution to be run again',
  }).catch(() => undefined); // the next line says what it is
  expect(await status(lost)).toMatchObject({ status: 'succeeded', output: { ran: true } });
  expect((await status(recent)).status).toBe('queued');
}, 40_000);

it('runs an execution released just after its job was picked up, without failing the job for a retry', async () => {
  // An async invoke saves its executions `held`, then their job, then releases them: the job's notification can beat
  // the release. The job claims them again shortly instead of failing and waiting for Agenda's retry (a second).
  const made = await sub.execute(
    'mutation($input: EdgeFunctionInput!) { createEdgeFunction(input: $input) { id } }',
    { input: { name: 'late-release', steps: [{ name: 'out', kind: 'Transform', expression: { ran: true } }] } },
    ctx,
  );
  expect(made.errors).toBeUndefined();
  const functionId = (made.data as { createEdgeFunction: { id: string } }).createEdgeFunction.id;
  const id = crypto.randomUUID();
  await client.query(
    `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, status, input, created_at)
     values ($1, $2, $3, 'late-release', 1, 'invoke', 'held', '{"body": {}}'::jsonb, now())`,
    [id, projectId, functionId],
  );
  const { createScheduler } = await import('../../../platform/scheduler.ts');
  const { EXECUTION_JOB } = await import('../../../subgraphs/functions/services/engine.ts');
  const other = createScheduler({ url: db.url, name: 'test-enqueuer', logger: createLogger('silent') });
  try {
    await other.enqueue(EXECUTION_JOB, { executionIds: [id] });
  } finally {
    await other.stop();
  }
  const job = async () =>
    (
      await client.query<{ locked_at: Date | null; fail_count: number | null }>(
        `select locked_at, fail_count from agenda_jobs where name = $1 and data->'executionIds' ? $2`,
        [EXECUTION_JOB, id],
      )
    ).rows[0];
  // The job is running (locked) and has found its execution still held.
  await waitFor(async () => ((await job())?.locked_at ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 5,
    message: 'the job to be picked up',
  });
  await client.query(`update function_executions set status = 'queued' where id = $1 and status = 'held'`, [id]);
  const failures: number[] = [];
  await waitFor(
    async () => {
      const row = await job();
      if (row?.fail_count) failures.push(row.fail_count);
      const { rows } = await client.query<{ status: string }>('select status from function_executions where id = $1', [
        id,
      ]);
      return rows[0]!.status === 'succeeded' && !row ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 10, message: 'the execution to succeed and its job to go' },
  );
  expect(failures).toEqual([]);
  const { rows } = await client.query('select output from function_executions where id = $1', [id]);
  expect(rows[0]!.output).toEqual({ ran: true });
}, 30_000);
