// Migration 0009 moves every step log from its own table (a row per line) into its execution's `step_log` column.
// A database migrated up to 0008 with executions that already ran keeps their logs, line for line and in order, as
// the step-log read answers them afterwards; an execution that never ran answers an empty log; the old table goes.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { openSubgraphDatabase } from '../../../platform/database.ts';
import { createLogger } from '../../../platform/logger.ts';
import { functionsMigrations } from '../../../subgraphs/functions/migrations/index.ts';
import { createExecutionService } from '../../../subgraphs/functions/services/executions.ts';
import { createHotSql, createSql } from '../../../subgraphs/functions/services/sql.ts';
import { createTestDatabase } from '../../support/database.ts';
import { openFunctionsTables } from './functions-fixtures.ts';

let db: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

it('moves the lines of every step log into its execution, in order, and drops the old table', async () => {
  const index = functionsMigrations.findIndex((m) => m.name === '0009-functions-step-log-column');
  expect(index).toBeGreaterThan(0);
  // The schema as it was before the migration.
  const before = await openSubgraphDatabase({
    name: 'functions',
    url: db.url,
    entities: [],
    migrations: functionsMigrations.slice(0, index),
    logger: createLogger('silent'),
  });
  await before.close();
  const projectId = crypto.randomUUID();
  const other = crypto.randomUUID();
  const [ran, queued, othersRun] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    for (const [id, project, status] of [
      [ran, projectId, 'succeeded'],
      [queued, projectId, 'queued'],
      [othersRun, other, 'failed'],
    ] as const)
      await c.query(
        `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, status, created_at)
         values ($1, $2, null, 'f', 1, 'invoke', $3, now())`,
        [id, project, status],
      );
    // Written out of order: the log is read by seq.
    const line = (id: string, seq: number, type: string, extra: string) =>
      c.query(
        `insert into function_execution_events (execution_id, seq, step, kind, type, attempt, input, output, error, duration_ms, at)
         values ($1, $2, 'save', 'Database', $3, 1, ${extra}, '2026-11-24T10:00:0${seq}Z')`,
        [id, seq, type],
      );
    await line(ran, 2, 'succeeded', `null, '{"body": {"count": 1}}', null, 1.25`);
    await line(ran, 1, 'started', `'{"table": "t"}', null, null, null`);
    await line(othersRun, 1, 'failed', `null, null, '{"code": "STEP_FAILED", "message": "no"}', 3`);
  } finally {
    await c.end();
  }

  const tables = await openFunctionsTables(db.url); // every migration: 0009 runs now
  const hot = createHotSql(db.url, createLogger('silent'));
  try {
    const executions = createExecutionService({ sql: createSql(tables.orm), hot });
    expect(await executions.events(projectId, ran)).toEqual([
      {
        seq: 1,
        step: 'save',
        kind: 'Database',
        type: 'started',
        attempt: 1,
        input: { table: 't' },
        output: null,
        error: null,
        durationMs: null,
        at: new Date('2026-11-24T10:00:01Z'),
      },
      {
        seq: 2,
        step: 'save',
        kind: 'Database',
        type: 'succeeded',
        attempt: 1,
        input: null,
        output: { body: { count: 1 } },
        error: null,
        durationMs: 1.25,
        at: new Date('2026-11-24T10:00:02Z'),
      },
    ]);
    expect(await executions.events(projectId, queued)).toEqual([]);
    expect((await executions.events(other, othersRun)).map((e) => [e.type, e.error, e.durationMs])).toEqual([
      ['failed', { code: 'STEP_FAILED', message: 'no' }, 3],
    ]);
    // Another project's log stays its own.
    await expect(executions.events(projectId, othersRun)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const old = await tables.client.query(`select to_regclass('function_execution_events') as t`);
    expect(old.rows[0].t).toBeNull();
  } finally {
    await hot.close();
    await tables.close();
  }
});
