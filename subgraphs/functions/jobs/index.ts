// The functions subgraph's background jobs, on its own scheduler (Agenda on the platform database).
import { CRON_JOB } from '../services/cron.ts';
import { EMAIL_JOB, type Mail } from '../services/email.ts';
import { EXECUTION_JOB, type QueuedJob } from '../services/engine.ts';
import { DELIVERY_JOB, type DeliveryJob } from '../services/event-deliveries.ts';
import { AFTER_HOOK_RETRIES, HOOK_JOB, type AfterHookJob } from '../services/hooks.ts';
import type { FunctionsServices } from '../services/index.ts';

export const SWEEP_JOB = 'functions.executions.sweep';
/** How long past its function's timeout a `running` execution is presumed lost. */
const LOST_GRACE_MS = 60_000;

/**
 * How long a released execution may wait unclaimed before its job is presumed gone and queued again. Far beyond
 * any wait a healthy queue has (a job's lock outlives a dead worker by a minute; P8 drains 1,000 runs a second).
 */
const STALE_QUEUED_MS = 10 * 60_000;

/** Queued executions one process runs at a time. */
const EXECUTION_CONCURRENCY = 20;

/** Defines the jobs and starts processing them. */
export async function startJobs(s: FunctionsServices): Promise<void> {
  // A queued execution runs once: the handler claims it (queued → running) before running. Its job row goes
  // once it succeeded (the execution row is the record): thousands of finished rows would slow every lock
  // query of the job name. Each process locks at most twice what it can run, leaving the rest to other workers.
  // A job may name several executions (enqueued together); they run side by side.
  s.scheduler.define<QueuedJob>(EXECUTION_JOB, async (data) => await s.engine.runQueued(data), {
    retries: 3,
    concurrency: EXECUTION_CONCURRENCY,
    removeOnComplete: true,
    lockLimit: 2 * EXECUTION_CONCURRENCY,
  });
  // A failed tick is not run again later: the next tick comes anyway.
  s.scheduler.define<{ cronId: string }>(CRON_JOB, async (data) => await s.cron.tick(data), { retries: 0, concurrency: 10 });
  s.scheduler.define<{ projectId: string; mail: Mail }>(EMAIL_JOB, async (data) => await s.email.sendQueued(data), { retries: 5, concurrency: 5 });
  // An after-hook runs at least once: a failed run throws and is retried with exponential backoff.
  s.scheduler.define<AfterHookJob>(HOOK_JOB, async (data) => await s.hooks.runAfter(data), { retries: AFTER_HOOK_RETRIES, concurrency: 20, removeOnComplete: true });
  // Outbound event deliveries: each job makes one attempt of the deliveries it names (a failed attempt schedules the
  // next itself); a job that fails to record (the database away) is retried by Agenda, and the sweep catches the rest.
  s.scheduler.define<DeliveryJob>(DELIVERY_JOB, async (data) => await s.eventDeliveries.deliver(data), {
    retries: 3,
    concurrency: 10,
    removeOnComplete: true,
    lockLimit: 20,
  });
  // Executions left `running` by a worker that died are marked failed (WORKER_LOST) once past their timeout.
  s.scheduler.define(SWEEP_JOB, async () => {
    const lost = await s.executions.sweepLost(LOST_GRACE_MS);
    if (lost > 0) s.logger.warn({ lost }, 'executions left running by a stopped worker marked failed');
    // Runs whose queuing failed while the database was away (the caller got 503): never run, now marked failed.
    const held = await s.executions.sweepHeld(LOST_GRACE_MS);
    if (held > 0) s.logger.warn({ held }, 'executions whose queuing failed marked failed (never run)');
    // Idempotency-Keys past their 24 hours.
    await s.idempotency.sweepExpired();
    // Event deliveries whose job was lost or whose attempt was cut short; finished ones past their 30 days.
    const deliveries = await s.eventDeliveries.sweep();
    if (deliveries.requeued + deliveries.cutShort > 0) s.logger.warn(deliveries, 'event deliveries queued again by the sweep');
    // Released and never claimed for far too long: their job is gone; it is queued again (a claim runs each once).
    const stale = await s.engine.requeueStale(STALE_QUEUED_MS);
    if (stale > 0) s.logger.warn({ stale }, 'queued executions whose job was lost queued again');
  }, { retries: 0, concurrency: 1 });
  await s.scheduler.start();
  await s.scheduler.agenda.every('1 minute', SWEEP_JOB);
}
