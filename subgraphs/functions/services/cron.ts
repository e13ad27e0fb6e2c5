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
import type { PlanLimitsReader } from '../../../platform/plan-limits.ts';
import { planLimitReached } from './run-limits.ts';

export const CRON_JOB = 'functions.cron.tick';
/** The header of a cron run's input naming the tick it runs for (ISO time; a tick run late is older than its run). */
export const SCHEDULED_AT_HEADER = 'x-tessera-cron-scheduled-at';
/** A tick missed by the instance that held it runs late if it is at most this late when another instance takes over. */
export const CATCH_UP_MS = 60_000;
/** At most this many missed ticks of a job run late at once (the latest ones); the others are recorded as missed. */
export const CATCH_UP_MAX = 10;
/** Missed ticks older than CATCH_UP_MS counted one by one at most (walking them costs ~0.2 ms each). */
export const MISSED_COUNT_MAX = 1000;
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

/** Run times looked at to find a schedule's shortest interval (a pattern's shortest gap shows within its first runs). */
const INTERVAL_SAMPLE = 400;
const shortestCache = new Map<string, number>();

/**
 * The shortest time between two runs of a schedule, in ms, over its next runs (seconds fields count). Stops early
 * at a gap under `below` (all a caller needs to know). Kept per schedule and time zone.
 */
export function shortestIntervalMs(schedule: string, timezone: string, below = 0): number {
  const key = `${timezone} ${schedule}`;
  const known = shortestCache.get(key);
  if (known !== undefined) return known;
  const it = CronExpressionParser.parse(schedule, { tz: timezone, currentDate: new Date() });
  let previous = it.next().getTime();
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < INTERVAL_SAMPLE && it.hasNext(); i++) {
    const t = it.next().getTime();
    shortest = Math.min(shortest, t - previous);
    previous = t;
    if (shortest < below) return shortest;
  }
  if (shortestCache.size > 1000) shortestCache.clear();
  shortestCache.set(key, shortest);
  return shortest;
}

/** The next `count` run times of a schedule. */
export function nextRuns(schedule: string, timezone: string, count = NEXT_RUNS, from = new Date()): Date[] {
  const it = CronExpressionParser.parse(schedule, { tz: timezone, currentDate: from });
  return Array.from({ length: count }, () => it.next().toDate());
}

/** The tick a run at `ranAt` is for: the schedule's latest time at or before it. */
export function scheduledTick(schedule: string, timezone: string, ranAt: Date): Date {
  return CronExpressionParser.parse(schedule, { tz: timezone, currentDate: new Date(ranAt.getTime() + 1) })
    .prev()
    .toDate();
}

/**
 * The ticks strictly between `previous` (the last one claimed) and `current` (being claimed): the latest CATCH_UP_MAX
 * of those at most CATCH_UP_MS older than `now` are `late` (to run now), the rest `missed` (the older ones counted
 * up to MISSED_COUNT_MAX, cron-parser walking one tick at a time: `count` is then a lower bound).
 */
export function ticksBetween(
  schedule: string,
  timezone: string,
  previous: Date,
  current: Date,
  now: Date,
): { late: Date[]; missed: { count: number; first: Date | null; last: Date | null } } {
  const within: Date[] = [];
  const missed = { count: 0, first: null as Date | null, last: null as Date | null };
  const miss = (t: Date) => {
    missed.count++;
    missed.first ??= t;
    missed.last = t;
  };
  const windowStart = now.getTime() - CATCH_UP_MS;
  const walk = (from: Date) =>
    CronExpressionParser.parse(schedule, { tz: timezone, currentDate: from, endDate: current });
  let it = walk(previous);
  while (it.hasNext()) {
    const t = it.next().toDate();
    if (t.getTime() <= previous.getTime() || t.getTime() >= current.getTime()) continue;
    if (t.getTime() >= windowStart) within.push(t);
    else {
      miss(t);
      // Too many to count: go on from the start of the window.
      if (missed.count >= MISSED_COUNT_MAX && t.getTime() < windowStart - 1) it = walk(new Date(windowStart - 1));
    }
  }
  const over = Math.max(0, within.length - CATCH_UP_MAX);
  for (const t of within.slice(0, over)) miss(t);
  return { late: within.slice(over), missed };
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
  limits,
}: {
  sql: Sql;
  functions: FunctionService;
  engine: Engine;
  scheduler: Scheduler;
  logger: Logger;
  /** The plan's min_cron_interval_seconds and max_cron_jobs (absent: neither applies). */
  limits?: PlanLimitsReader;
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

  /** PLAN_LIMIT_REACHED when the schedule runs more often than the project's plan allows. */
  const checkInterval = async (projectId: string, schedule: string, timezone: string) => {
    const plan = limits ? await limits.plan(projectId) : null;
    const min = plan?.limits.minCronIntervalSeconds ?? null;
    if (!plan || min === null) return;
    const shortest = shortestIntervalMs(schedule, timezone, min * 1000);
    if (shortest < min * 1000)
      throw planLimitReached(
        `The schedule "${schedule}" runs as often as every ${shortest / 1000} s; the ${plan.planId} plan allows cron runs at most every ${min} s`,
        'min_cron_interval_seconds',
        min,
      );
  };

  const checkInput = (v: unknown) => {
    if (v !== undefined && v !== null && JSON.stringify(v).length > 65_536)
      throw errors.validation('input', 'must be at most 64 KiB of JSON');
    return v ?? null;
  };

  /**
   * A tick of a schedule more frequent than the plan allows (a job saved before the plan got stricter, or edited
   * directly in the database) is skipped when it comes sooner than the plan's minimum after the job's last run: the
   * job runs at most every min_cron_interval_seconds (`skip`), and such a job never runs missed ticks late
   * (`spaced`). Schedules within the plan are never second-guessed here (a late tick followed by an on-time one is
   * not "too soon").
   */
  const planSpacing = async (data: {
    cronId: string;
    projectId?: string;
  }): Promise<{ skip: boolean; spaced: boolean }> => {
    const free = { skip: false, spaced: false };
    if (!limits || !data.projectId) return free;
    const min = (await limits.get(data.projectId))?.minCronIntervalSeconds ?? null;
    if (min === null) return free;
    const rows = await sql.rows<{ name: string; schedule: string; timezone: string; last_run_at: Date | null }>(
      'select name, schedule, timezone, last_run_at from cron_jobs where id = ?',
      [data.cronId],
    );
    const r = rows[0];
    if (!r) return free;
    if (shortestIntervalMs(r.schedule, r.timezone, min * 1000) >= min * 1000) return free;
    const since = r.last_run_at ? Date.now() - new Date(r.last_run_at).getTime() : Number.POSITIVE_INFINITY;
    if (since >= min * 1000) return { skip: false, spaced: true };
    logger.info(
      { cron: r.name, project: data.projectId, schedule: r.schedule, min_cron_interval_seconds: min },
      'cron tick skipped: the schedule runs more often than the plan allows',
    );
    return { skip: true, spaced: true };
  };

  return {
    async create(projectId: string, input: CronJobInput): Promise<CronJob> {
      const name = typeof input.name === 'string' ? input.name.trim() : '';
      if (!CRON_NAME.test(name))
        throw errors.validation('name', 'must use letters, digits, _, - and . (at most 64 characters)');
      const timezone = checkTimezone(input.timezone);
      const schedule = checkSchedule(input.schedule, timezone);
      await checkInterval(projectId, schedule, timezone);
      const fnName = checkFunctionName(input.function, 'function');
      const fn = await functions.findByName(projectId, fnName);
      if (!fn) throw errors.validation('function', `no function named "${fnName}" in this project`);
      if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean')
        throw errors.validation('enabled', 'must be true or false');
      const enabled = input.enabled !== false;
      const now = new Date();
      const id = crypto.randomUUID();
      const plan = limits ? await limits.plan(projectId) : null;
      const max = plan?.limits.maxCronJobs ?? null;
      const params = [
        id,
        projectId,
        name,
        schedule,
        timezone,
        fn.id,
        jsonParam(checkInput(input.input)),
        enabled,
        now,
        now,
      ];
      const insert =
        'insert into cron_jobs (id, project_id, name, schedule, timezone, function_id, input, enabled, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?)';
      try {
        if (plan && max !== null) {
          // Counted under the project's lock, so two creates at once cannot both take the last place.
          await sql.tx(async (tx) => {
            await tx.run("select pg_advisory_xact_lock(hashtext('functions.cron_jobs'), hashtext(?))", [projectId]);
            const rows = await tx.rows<{ n: number }>('select count(*)::int as n from cron_jobs where project_id = ?', [
              projectId,
            ]);
            if (Number(rows[0]?.n ?? 0) >= max)
              throw planLimitReached(
                `The ${plan.planId} plan allows ${max} cron jobs per project`,
                'max_cron_jobs',
                max,
              );
            await tx.run(insert, params);
          });
        } else await sql.run(insert, params);
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
      // A job kept as it was is not refused for a plan made stricter since (its ticks are spaced at run time).
      if (schedule !== current.schedule || timezone !== current.timezone)
        await checkInterval(projectId, schedule, timezone);
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
      // A new schedule (or a job enabled again) starts from now: no tick before it is owed, none runs late.
      const fresh = schedule !== current.schedule || timezone !== current.timezone || (enabled && !current.enabled);
      try {
        await sql.run(
          'update cron_jobs set name = ?, schedule = ?, timezone = ?, function_id = ?, input = ?::jsonb, enabled = ?, updated_at = ?, last_tick_at = case when ? then null else last_tick_at end where id = ? and project_id = ?',
          [name, schedule, timezone, functionId, jsonParam(value), enabled, new Date(), fresh, id, projectId],
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
     * The job: one tick of one cron job. A job whose row is gone or disabled cancels itself. The tick is the schedule's
     * latest time at or before the run (`at.ranAt`); one statement claims it (only if later than the last claimed
     * tick: an instance taking the job over from one that died never runs a tick twice), marks the run and reads the
     * job, its function and the project's sealed secrets, so the run starts at once. Ticks between the last claimed
     * one and this one (their instance died holding the job) run late, side by side with this one, if at most
     * CATCH_UP_MS late (the latest CATCH_UP_MAX of them); older ones are logged as missed. A job spaced by its plan
     * (planSpacing) runs none late, and a tick it skips is claimed. Each run sees its tick in
     * `input.headers["x-tessera-cron-scheduled-at"]`.
     */
    async tick(
      data: { cronId: string; projectId?: string },
      at: { ranAt: Date; schedule?: string; timezone?: string } = { ranAt: new Date() },
    ): Promise<void> {
      const spacing = await planSpacing(data);
      let { schedule, timezone } = at;
      if (!schedule) {
        const rows = await sql.rows<{ schedule: string; timezone: string }>(
          'select schedule, timezone from cron_jobs where id = ?',
          [data.cronId],
        );
        schedule = rows[0]?.schedule;
        timezone = rows[0]?.timezone;
      }
      const tickAt = schedule ? scheduledTick(schedule, timezone ?? 'UTC', at.ranAt) : null;
      if (spacing.skip) {
        // A tick skipped for the plan is not owed: claimed, so no later run takes it for a missed one.
        if (tickAt)
          await sql.run(
            'update cron_jobs set last_tick_at = ? where id = ? and (last_tick_at is null or last_tick_at < ?)',
            [tickAt, data.cronId, tickAt],
          );
        return;
      }
      const rows = tickAt
        ? await sql.rows(
            `with p as (select id, last_tick_at from cron_jobs where id = ? for update)
             update cron_jobs c set last_run_at = ?, last_tick_at = ? from edge_functions f, p
             where c.id = p.id and c.enabled and f.id = c.function_id and (p.last_tick_at is null or p.last_tick_at < ?)
             returning c.*, p.last_tick_at as previous_tick, f.name as function_name, to_jsonb(f) as function_row, ${sealedSecretsOf('c.project_id')} as sealed_secrets`,
            [data.cronId, new Date(), tickAt, tickAt],
          )
        : [];
      if (!rows[0]) {
        const still = await sql.rows('select 1 from cron_jobs where id = ? and enabled', [data.cronId]);
        // Enabled still: this tick was claimed already (by an instance that took the job over); nothing to do.
        if (still[0] && tickAt) return;
        await scheduler.agenda.cancel({ name: CRON_JOB, data: { cronId: data.cronId } });
        return;
      }
      const c = toCron(rows[0]);
      const fn = toFunction(rows[0].function_row as Record<string, unknown>);
      const sealedSecrets = rows[0].sealed_secrets as Record<string, string>;
      const previous = rows[0].previous_tick ? new Date(rows[0].previous_tick as string) : null;
      const { late, missed } =
        previous && !spacing.spaced
          ? ticksBetween(c.schedule, c.timezone, previous, tickAt!, at.ranAt)
          : { late: [], missed: { count: 0, first: null, last: null } };
      if (missed.count > 0)
        logger.warn(
          { cron: c.name, project: c.projectId, missed: missed.count, first: missed.first, last: missed.last },
          'cron ticks missed (no instance ran them in time)',
        );
      if (late.length > 0)
        logger.info(
          { cron: c.name, project: c.projectId, late: late.length, first: late[0], last: late[late.length - 1] },
          'cron ticks run late (the instance running them stopped)',
        );
      const runOne = async (scheduledAt: Date) => {
        // With every run slot of the project taken, the tick waits in line as a queued execution.
        const outcome = await engine.runOrQueue({
          fn,
          input: makeInput({
            body: c.input,
            method: 'POST',
            headers: { [SCHEDULED_AT_HEADER]: scheduledAt.toISOString() },
          }),
          trigger: 'cron',
          triggerRef: c.name,
          depth: 0,
          sealedSecrets,
        });
        if ('queued' in outcome) return;
        if (outcome.status === 'failed')
          logger.warn({ cron: c.name, execution: outcome.executionId, error: outcome.error }, 'cron run failed');
      };
      await Promise.all([...late, tickAt!].map(runOne));
    },

    /** Cancels every Agenda job of a project's cron jobs (project deleted). */
    async cancelProject(projectId: string): Promise<void> {
      await scheduler.agenda.cancel({ name: CRON_JOB, data: { projectId } });
    },
  };
}
