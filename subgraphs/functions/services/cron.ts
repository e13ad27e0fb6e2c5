// Cron jobs: `{name, schedule, timezone, function, input?, enabled?}`. Each enabled job is one repeating
// Agenda job (`functions.cron.tick`, unique by cron id) on the shared jobs table: Agenda's lock makes one
// instance run each tick, however many run the functions subgraph. The answer shows the next run times.
import crypto from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';
import { checkFunctionName } from './definitions.ts';
import { makeInput, type Engine } from './engine.ts';
import { toFunction, type FunctionService } from './functions.ts';
import { sealedSecretsOf } from './secrets.ts';
import { isUniqueViolation, jsonParam, type Sql } from './sql.ts';
import { isUuid } from '../../../platform/ids.ts';

export const CRON_JOB = 'functions.cron.tick';
const CRON_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const NEXT_RUNS = 5;

export type CronJob = {
  id: string;
  projectId: string;
  name: string;
  schedule: string;
  timezone: string;
  functionId: string;
  functionName: string;
  input: unknown;
  enabled: boolean;
  lastRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

type Row = Record<string, unknown>;
const toCron = (r: Row): CronJob => ({
  id: r.id as string,
  projectId: r.project_id as string,
  name: r.name as string,
  schedule: r.schedule as string,
  timezone: r.timezone as string,
  functionId: r.function_id as string,
  functionName: r.function_name as string,
  input: r.input ?? null,
  enabled: Boolean(r.enabled),
  lastRunAt: r.last_run_at ? new Date(r.last_run_at as string) : null,
  createdAt: new Date(r.created_at as string),
  updatedAt: new Date(r.updated_at as string),
});
const SELECT = 'select c.*, f.name as function_name from cron_jobs c join edge_functions f on f.id = c.function_id';

/** Checks an IANA time zone name. */
export function checkTimezone(value: unknown): string {
  const tz = typeof value === 'string' && value.trim() !== '' ? value.trim() : 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw errors.validation('timezone', `"${tz}" is not an IANA time zone (e.g. Europe/Paris, UTC)`);
  }
  return tz;
}

/** Checks a cron expression (5 fields, or 6 with seconds first) in a time zone. */
export function checkSchedule(value: unknown, timezone: string): string {
  const schedule = typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '';
  const fields = schedule.split(' ').length;
  if (!schedule || fields < 5 || fields > 6)
    throw errors.validation(
      'schedule',
      'must be a cron expression of 5 fields (minute hour day month weekday), or 6 with seconds first',
    );
  try {
    CronExpressionParser.parse(schedule, { tz: timezone, strict: false }).next();
  } catch (err) {
    throw errors.validation('schedule', `is not a valid cron expression: ${(err as Error).message}`);
  }
  return schedule;
}

/** The next `count` run times of a schedule. */
export function nextRuns(schedule: string, timezone: string, count = NEXT_RUNS, from = new Date()): Date[] {
  const it = CronExpressionParser.parse(schedule, { tz: timezone, currentDate: from });
  return Array.from({ length: count }, () => it.next().toDate());
}

export type CronService = ReturnType<typeof createCronService>;

/** Creates the cron service. */
/** A cron job's fields as a caller sends them (checked by create and update; update keeps what is left out). */
export type CronJobInput = {
  name?: unknown;
  schedule?: unknown;
  timezone?: unknown;
  function?: unknown;
  input?: unknown;
  enabled?: unknown;
};

export function createCronService({
  sql,
  functions,
  engine,
  scheduler,
  logger,
}: {
  sql: Sql;
  functions: FunctionService;
  engine: Engine;
  scheduler: Scheduler;
  logger: Logger;
}) {
  const notFound = (id: string) => errors.notFound('cron job', id.slice(0, 100));

  /** Puts the Agenda job in line with the row: one repeating job when enabled, none otherwise. */
  const sync = async (c: CronJob) => {
    if (!c.enabled) {
      await scheduler.agenda.cancel({ name: CRON_JOB, data: { cronId: c.id } });
      return;
    }
    await scheduler.agenda
      .create(CRON_JOB, { cronId: c.id, projectId: c.projectId })
      .repeatEvery(c.schedule, { timezone: c.timezone, skipImmediate: true })
      .unique({ 'data.cronId': c.id })
      .save();
  };

  const get = async (projectId: string, id: string): Promise<CronJob> => {
    if (!isUuid(id)) throw notFound(id);
    const rows = await sql.rows(`${SELECT} where c.id = ? and c.project_id = ?`, [id, projectId]);
    if (!rows[0]) throw notFound(id);
    return toCron(rows[0]);
  };

  const checkInput = (v: unknown) => {
    if (v !== undefined && v !== null && JSON.stringify(v).length > 65_536)
      throw errors.validation('input', 'must be at most 64 KiB of JSON');
    return v ?? null;
  };

  return {
    async create(projectId: string, input: CronJobInput): Promise<CronJob> {
      const name = typeof input.name === 'string' ? input.name.trim() : '';
      if (!CRON_NAME.test(name))
        throw errors.validation('name', 'must use letters, digits, _, - and . (at most 64 characters)');
      const timezone = checkTimezone(input.timezone);
      const schedule = checkSchedule(input.schedule, timezone);
      const fnName = checkFunctionName(input.function, 'function');
      const fn = await functions.findByName(projectId, fnName);
      if (!fn) throw errors.validation('function', `no function named "${fnName}" in this project`);
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean')
        throw errors.validation('enabled', 'must be true or false');
      const enabled = input.enabled !== false;
      const now = new Date();
      const id = crypto.randomUUID();
      try {
        await sql.run(
          'insert into cron_jobs (id, project_id, name, schedule, timezone, function_id, input, enabled, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)',
          [id, projectId, name, schedule, timezone, fn.id, jsonParam(checkInput(input.input)), enabled, now, now],
        );
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`A cron job named "${name}" already exists`, { field: 'name', name });
        throw err;
      }
      const c = await get(projectId, id);
      await sync(c);
      return c;
    },

    /** Changes any of the fields; omitted ones stay. */
    async update(projectId: string, id: string, input: CronJobInput): Promise<CronJob> {
      const current = await get(projectId, id);
      const name =
        input.name === undefined || input.name === null
          ? current.name
          : typeof input.name === 'string'
            ? input.name.trim()
            : '';
      if (!CRON_NAME.test(name))
        throw errors.validation('name', 'must use letters, digits, _, - and . (at most 64 characters)');
      const timezone =
        input.timezone === undefined || input.timezone === null ? current.timezone : checkTimezone(input.timezone);
      const schedule = checkSchedule(input.schedule ?? current.schedule, timezone);
      let functionId = current.functionId;
      if (input.function !== undefined && input.function !== null) {
        const fnName = checkFunctionName(input.function, 'function');
        const fn = await functions.findByName(projectId, fnName);
        if (!fn) throw errors.validation('function', `no function named "${fnName}" in this project`);
        functionId = fn.id;
      }
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean')
        throw errors.validation('enabled', 'must be true or false');
      const enabled = typeof input.enabled === 'boolean' ? input.enabled : current.enabled;
      const value = input.input === undefined ? current.input : checkInput(input.input);
      try {
        await sql.run(
          'update cron_jobs set name = ?, schedule = ?, timezone = ?, function_id = ?, input = ?::jsonb, enabled = ?, updated_at = ? where id = ? and project_id = ?',
          [name, schedule, timezone, functionId, jsonParam(value), enabled, new Date(), id, projectId],
        );
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`A cron job named "${name}" already exists`, { field: 'name', name });
        throw err;
      }
      const c = await get(projectId, id);
      // A new schedule starts from now: drop the old repeating job, then save the new one.
      await scheduler.agenda.cancel({ name: CRON_JOB, data: { cronId: c.id } });
      await sync(c);
      return c;
    },

    get,

    async list(projectId: string): Promise<CronJob[]> {
      return (await sql.rows(`${SELECT} where c.project_id = ? order by c.name`, [projectId])).map(toCron);
    },

    async remove(projectId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the cron job id, as ?id= or in the body)');
      await get(projectId, id);
      await sql.run('delete from cron_jobs where id = ? and project_id = ?', [id, projectId]);
      await scheduler.agenda.cancel({ name: CRON_JOB, data: { cronId: id } });
    },

    nextRuns: (c: CronJob): Date[] => (c.enabled ? nextRuns(c.schedule, c.timezone) : []),

    /**
     * The job: one tick of one cron job. A job whose row is gone or disabled cancels itself. One statement marks
     * the run and reads the job, its function and the project's sealed secrets, so the run starts at once.
     */
    async tick(data: { cronId: string }): Promise<void> {
      const rows = await sql.rows(
        `update cron_jobs c set last_run_at = ? from edge_functions f where c.id = ? and c.enabled and f.id = c.function_id
         returning c.*, f.name as function_name, to_jsonb(f) as function_row, ${sealedSecretsOf('c.project_id')} as sealed_secrets`,
        [new Date(), data.cronId],
      );
      if (!rows[0]) {
        await scheduler.agenda.cancel({ name: CRON_JOB, data: { cronId: data.cronId } });
        return;
      }
      const c = toCron(rows[0]);
      const fn = toFunction(rows[0].function_row as Record<string, unknown>);
      const sealedSecrets = rows[0].sealed_secrets as Record<string, string>;
      const outcome = await engine.runSync({
        fn,
        input: makeInput({ body: c.input, method: 'POST' }),
        trigger: 'cron',
        triggerRef: c.name,
        depth: 0,
        dryRun: false,
        sealedSecrets,
      });
      if (outcome.status === 'failed')
        logger.warn({ cron: c.name, execution: outcome.executionId, error: outcome.error }, 'cron run failed');
    },

    /** Cancels every Agenda job of a project's cron jobs (project deleted). */
    async cancelProject(projectId: string): Promise<void> {
      await scheduler.agenda.cancel({ name: CRON_JOB, data: { projectId } });
    },
  };
}
