// The job scheduler: Agenda over the platform PostgreSQL (@agendajs/postgres-backend, one `agenda_jobs`
// table shared by every process, jobs locked so each runs once). A process only runs the jobs it
// defines, so each subgraph makes its own scheduler with its own job names (dotted: `identity.mail.send`).
// The production layout's MongoDB backend would replace the PostgresBackend constructor below, nothing else.
import { Agenda, backoffStrategies, type Job } from 'agenda';
import { PostgresBackend } from '@agendajs/postgres-backend';
import pg from 'pg';
import type { Logger } from './logger.ts';

export type JobHandler<D> = (data: D, job: Job<D>) => Promise<void>;

export type Scheduler = {
  agenda: Agenda;
  /**
   * Defines a job; failures are retried with exponential backoff up to `retries` times. `removeOnComplete` deletes a
   * one-time job's row once it succeeded (for high-volume jobs whose outcome is recorded elsewhere: finished rows
   * left in the jobs table slow every later lookup of that job name); `lockLimit` caps how many queued jobs of the
   * name one process locks ahead of running them (0: no cap).
   */
  define: <D>(name: string, handler: JobHandler<D>, opts?: { retries?: number; concurrency?: number; lockLifetimeMs?: number; removeOnComplete?: boolean; lockLimit?: number }) => void;
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
  channel.on('error', (err) => log.warn({ err: (err as Error)?.message ?? String(err) }, 'scheduler notification connection lost; reconnecting'));
  const reconnect = channel.config?.reconnect;
  if (reconnect) Object.assign(reconnect, { enabled: true, maxAttempts: Number.POSITIVE_INFINITY, initialDelayMs: 100, maxDelayMs: 1000 });
}

/** Creates a scheduler; define jobs, then `start()` to begin processing. */
export function createScheduler(opts: { url: string; name: string; logger: Logger; processEveryMs?: number }): Scheduler {
  const log = opts.logger.child({ scheduler: opts.name });
  // Our own pool, so an idle connection dropped by the server (restart, admin command) is logged instead of
  // crashing the process as an unhandled 'error' event.
  const pool = new pg.Pool({ connectionString: opts.url });
  pool.on('error', (err) => log.warn({ err }, 'scheduler database connection lost'));
  const backend = new PostgresBackend({ pool });
  const agenda = new Agenda({
    name: opts.name,
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
      agenda.define(name, async (job: Job) => handler(job.attrs.data as never, job as never), {
        concurrency: o.concurrency ?? 5,
        // Jobs here are short; a job still running after this long is presumed dead and may run again.
        lockLifetime: o.lockLifetimeMs ?? 60_000,
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
    },
    async stop() {
      await agenda.stop(true);
      await backend.disconnect().catch(() => {});
      await pool.end().catch(() => {});
      started = false;
    },
  };
}
