// One way to declare background work. A subgraph keeps its jobs in subgraphs/<name>/jobs/: one file per job
// exporting `defineJob({...})`, and jobs/index.ts listing them with `defineJobs({...})`; its definition (index.ts)
// hands that list to the platform as `jobs:`. startSubgraph then makes the subgraph's scheduler (Agenda,
// platform/scheduler.ts, named after the subgraph; given to its services as `deps.scheduler` for enqueuing),
// defines every job before the subgraph's own `start`, starts processing after it, schedules the recurring ones,
// and stops the scheduler on close. A job runs once across every process (Agenda's lock); a run whose process dies
// is run again once its lock lifetime has passed; a failed run is retried with backoff up to `retries` times.
// What stays in-process instead (and why) is listed in docs/architecture.md, "Background work".
import type { Job } from 'agenda';
import type { Config } from './config.ts';
import type { JobOptions, Scheduler } from './scheduler.ts';

/** One job: its name (dotted, starting with its subgraph's name), what it does with the subgraph's services, how it runs. */
export type JobDeclaration<S, D = unknown> = JobOptions & {
  name: string;
  handler: (services: S, data: D, job: Job<D>) => Promise<void>;
  /**
   * Recurring: how often it runs, as Agenda reads it ('10 seconds', '1 minute'), or from the configuration. A
   * recurring job runs once at start, then every interval, on one process at a time. Without it the job runs when
   * something enqueues it (`scheduler.enqueue(name, data)`).
   */
  every?: string | ((config: Config) => string);
};

/** A subgraph's jobs and how often its scheduler looks for due ones (ms; default 1 s). */
export type JobList<S> = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  jobs: JobDeclaration<S, any>[];
  pollMs?: number | ((config: Config) => number);
};

/** Declares a job (one file in the subgraph's jobs/). */
export function defineJob<S, D = unknown>(declaration: JobDeclaration<S, D>): JobDeclaration<S, D> {
  return declaration;
}

/** Declares a subgraph's job list (its jobs/index.ts). */
export function defineJobs<S>(list: JobList<S>): JobList<S> {
  return list;
}

const NAME = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
const INTERVAL = /^\d+ (second|minute|hour|day)s?$/;

/** The recurring interval of a job under `config`, if it has one. */
export function intervalOf(job: JobDeclaration<unknown, unknown>, config: Config): string | undefined {
  return typeof job.every === 'function' ? job.every(config) : job.every;
}

/** How often the scheduler of `list` polls under `config`. */
export function pollMsOf(list: JobList<unknown>, config: Config): number {
  return (typeof list.pollMs === 'function' ? list.pollMs(config) : list.pollMs) ?? 1000;
}

/** What is wrong with `subgraph`'s job list under `config` (nothing: an empty list). */
export function jobListProblems(subgraph: string, list: JobList<unknown>, config: Config): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const count = (what: string, v: number | undefined, min: number) => {
    if (v !== undefined && (!Number.isInteger(v) || v < min))
      problems.push(`${what}: expected an integer of ${min} or more, got ${v}`);
  };
  if (list.jobs.length === 0)
    problems.push(`${subgraph}: an empty job list (leave jobs out of the definition instead)`);
  for (const job of list.jobs) {
    const at = `${subgraph} job ${job.name}`;
    if (!NAME.test(job.name) || !job.name.startsWith(`${subgraph}.`))
      problems.push(`${at}: the name must be dotted and start with "${subgraph}."`);
    if (seen.has(job.name)) problems.push(`${at}: declared twice`);
    seen.add(job.name);
    if (typeof job.handler !== 'function') problems.push(`${at}: no handler`);
    count(`${at} retries`, job.retries, 0);
    count(`${at} concurrency`, job.concurrency, 1);
    count(`${at} lockLifetimeMs`, job.lockLifetimeMs, 1000);
    count(`${at} lockLimit`, job.lockLimit, 0);
    const every = intervalOf(job, config);
    if (every !== undefined) {
      if (!INTERVAL.test(every)) problems.push(`${at}: every "${every}" is not an interval such as "10 seconds"`);
      if (job.removeOnComplete) problems.push(`${at}: a recurring job cannot be removed on completion`);
    }
  }
  count(`${subgraph} pollMs`, pollMsOf(list, config), 10);
  return problems;
}

/** Defines every job of `list` on `scheduler`, each handler bound to `services`; refuses a malformed list. */
export function registerJobs<S>(
  subgraph: string,
  scheduler: Scheduler,
  services: S,
  list: JobList<S>,
  config: Config,
): void {
  const problems = jobListProblems(subgraph, list as JobList<unknown>, config);
  if (problems.length > 0) throw new Error(`malformed jobs: ${problems.join('; ')}`);
  for (const job of list.jobs) {
    const options: JobOptions = {
      retries: job.retries,
      concurrency: job.concurrency,
      lockLifetimeMs: job.lockLifetimeMs,
      removeOnComplete: job.removeOnComplete,
      lockLimit: job.lockLimit,
      heartbeat: job.heartbeat,
    };
    scheduler.define(job.name, async (data, run) => await job.handler(services, data as never, run as never), options);
  }
}

/** Starts processing `list`'s jobs and schedules the recurring ones (idempotent: one row per recurring job name). */
export async function startJobs<S>(scheduler: Scheduler, list: JobList<S>, config: Config): Promise<void> {
  await scheduler.start();
  for (const job of list.jobs) {
    const every = intervalOf(job as JobDeclaration<unknown, unknown>, config);
    if (every) await scheduler.agenda.every(every, job.name);
  }
}

/** The scheduler startSubgraph made for a subgraph that declares jobs: its services enqueue on it. */
export function schedulerOf(deps: { scheduler?: Scheduler }, subgraph: string): Scheduler {
  if (!deps.scheduler)
    throw new Error(`the ${subgraph} subgraph declares jobs: its services need the scheduler startSubgraph gives them`);
  return deps.scheduler;
}
