// The job scheduler: Agenda over the platform PostgreSQL (@agendajs/postgres-backend, one `agenda_jobs`
// table shared by every process, jobs locked so each runs once), or over MongoDB when the URL is `mongodb://…`
// (platform/scheduler-backend.ts). A process only runs the jobs it defines, so each subgraph makes its own
// scheduler with its own job names (dotted: `identity.mail.send`).
import os from 'node:os';
import tty from 'node:tty';
import { Agenda, backoffStrategies, type Job } from 'agenda';
import debug from 'debug';
import type { Logger } from './logger.ts';
import { createSchedulerBackend } from './scheduler-backend.ts';
import { trackQueue, untrackQueue } from './metrics.ts';

// Agenda makes a `debug` logger for each job it locks and runs (JobProcessor's debug.extend), and each new logger
// asks whether stderr is a terminal (an isatty system call) unless DEBUG_COLORS said it: under a flood of queued
// function runs that was ~3% of the process's CPU (bench N1's profile). Asked once here; the answer does not change.
if (debug.inspectOpts && !('colors' in debug.inspectOpts)) debug.inspectOpts.colors = tty.isatty(process.stderr.fd);

export type JobHandler<D> = (data: D, job: Job<D>) => Promise<void>;

/**
 * How a job runs: failures are retried with exponential backoff up to `retries` times (default 5); `concurrency` runs
 * of it at once in one process (default 5); `lockLifetimeMs` after which a run still going is presumed dead and may
 * run again (default 60 s); `removeOnComplete` deletes a one-time job's row once it succeeded (for high-volume jobs
 * whose outcome is recorded elsewhere: finished rows left in the jobs table slow every later lookup of that job
 * name); `lockLimit` caps how many queued jobs of the name one process locks ahead of running them (0: no cap);
 * `heartbeat` renews the lock of a run every third of `lockLifetimeMs` while it goes on, so the lifetime bounds only how
 * long a run of a process that died holds the job (a short lifetime then hands the job over within seconds).
 */
export type JobOptions = {
  retries?: number;
  concurrency?: number;
  lockLifetimeMs?: number;
  removeOnComplete?: boolean;
  lockLimit?: number;
  heartbeat?: boolean;
};

/**
 * Runs `handler` while renewing `job`'s lock every `everyMs`. The last renewal is awaited before returning: a renewal
 * landing after Agenda's own unlock (which follows the handler) would leave the job locked for a whole lifetime.
 */
async function withHeartbeat<T>(job: Job, everyMs: number, log: Logger, handler: () => Promise<T>): Promise<T> {
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = renewing
      .then(() => job.touch())
      .catch((err: unknown) =>
        log.warn({ err: (err as Error)?.message ?? String(err), job: job.attrs.name }, 'job lock renewal failed'),
      );
  }, everyMs);
  try {
    return await handler();
  } finally {
    clearInterval(timer);
    await renewing;
  }
}

export type Scheduler = {
  agenda: Agenda;
  /** Defines a job (see JobOptions). Subgraphs declare theirs in jobs/ (platform/jobs.ts), which calls this. */
  define: <D>(name: string, handler: JobHandler<D>, opts?: JobOptions) => void;
  /** Queues a job to run as soon as a worker is free. */
  enqueue: <D extends object>(name: string, data: D) => Promise<void>;
  start: () => Promise<void>;
  stop: () => Promise<void>;
};

type NotificationChannel = {
  on: (event: 'error', listener: (err: unknown) => void) => void;
  config?: { reconnect?: { enabled: boolean; maxAttempts: number; initialDelayMs: number; maxDelayMs: number } };
};

/**
 * The PostgreSQL backend's LISTEN connection (PostgresNotificationChannel) reconnects by itself, but reports every
 * loss as an 'error' event — with no listener, a PostgreSQL restart ended the process — and gives up after 10 tries
 * waiting up to 30 s between them. Its losses are logged here, and it keeps trying every 100 ms to 1 s (jobs are
 * also polled every `processEvery` meanwhile, so none is missed).
 */
function superviseNotifications(backend: unknown, log: Logger): void {
  const channel = (backend as { notificationChannel?: NotificationChannel }).notificationChannel;
  if (!channel) return;
  channel.on('error', (err) =>
    log.warn({ err: (err as Error)?.message ?? String(err) }, 'scheduler notification connection lost; reconnecting'),
  );
  const reconnect = channel.config?.reconnect;
  if (reconnect)
    Object.assign(reconnect, {
      enabled: true,
      maxAttempts: Number.POSITIVE_INFINITY,
      initialDelayMs: 100,
      maxDelayMs: 1000,
    });
}

/** Creates a scheduler over `url` (PostgreSQL, or MongoDB for `mongodb://`); define jobs, then `start()` to begin processing. */
export function createScheduler(opts: {
  url: string;
  name: string;
  logger: Logger;
  processEveryMs?: number;
}): Scheduler {
  const log = opts.logger.child({ scheduler: opts.name });
  const { backend, close } = createSchedulerBackend(opts.url, opts.name, log);
  const agenda = new Agenda({
    // Per process, so a job row's `last_modified_by` names the instance that locked or ran it last.
    name: `${opts.name}@${os.hostname()}/${process.pid}`,
    backend,
    processEvery: opts.processEveryMs ?? 1000,
  });
  superviseNotifications(backend, log);
  agenda.on('error', (err: unknown) => log.error({ err }, 'scheduler error'));
  // Agenda also re-emits other schedulers' failures heard over its notification channel, with a notification
  // (no `attrs`) in place of the job and `remote` set: those are logged by the process that ran the job.
  agenda.on('fail', (err: unknown, job: Job | undefined, remote?: boolean) => {
    if (remote || !job?.attrs) return;
    log.warn({ err, job: job.attrs.name, id: String(job.attrs._id) }, 'job failed');
  });
  let started = false;
  return {
    agenda,
    define(name, handler, o = {}) {
      const lockLifetime = o.lockLifetimeMs ?? 60_000;
      const run = (job: Job) => handler(job.attrs.data as never, job as never);
      agenda.define(name, o.heartbeat ? (job: Job) => withHeartbeat(job, lockLifetime / 3, log, () => run(job)) : run, {
        concurrency: o.concurrency ?? 5,
        // Jobs here are short; a job still running after this long is presumed dead and may run again.
        lockLifetime,
        backoff: backoffStrategies.exponential({ delay: 1000, maxRetries: o.retries ?? 5 }),
        removeOnComplete: o.removeOnComplete ?? false,
        lockLimit: o.lockLimit ?? 0,
      });
    },
    async enqueue(name, data) {
      await agenda.now(name, data);
    },
    async start() {
      if (started) return;
      started = true;
      await agenda.start();
      // Queue depth and lag for /metrics: due jobs of this scheduler's names not yet picked up.
      trackQueue(opts.name, async () => {
        const names = Object.keys(agenda.definitions);
        if (names.length === 0) return { depth: 0, oldestDueAt: null };
        const { jobs, total } = await agenda.queryJobs({
          names,
          state: 'queued',
          sort: { nextRunAt: 'asc' },
          limit: 1,
        });
        return { depth: total, oldestDueAt: jobs[0]?.nextRunAt ? new Date(jobs[0].nextRunAt) : null };
      });
    },
    async stop() {
      untrackQueue(opts.name);
      await agenda.stop(true);
      await close();
      started = false;
    },
  };
}
