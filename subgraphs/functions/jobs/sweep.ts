// Every minute, on one process: what a stopped worker or an unreachable database left behind is put right.
import { defineJob } from '../../../platform/jobs.ts';
import type { FunctionsServices } from '../services/index.ts';

export const SWEEP_JOB = 'functions.executions.sweep';
/** How long past its function's timeout a `running` execution is presumed lost. */
const LOST_GRACE_MS = 60_000;

/**
 * How long a released execution may wait unclaimed before its job is presumed gone and queued again. Far beyond
 * any wait a healthy queue has (a job's lock outlives a dead worker by a minute; P8 drains 1,000 runs a second).
 */
const STALE_QUEUED_MS = 10 * 60_000;

export const sweepJob = defineJob<FunctionsServices>({
  name: SWEEP_JOB,
  every: '1 minute',
  retries: 0,
  concurrency: 1,
  handler: async (s) => {
    // Executions left `running` by a worker that died are marked failed (WORKER_LOST) once past their timeout.
    const lost = await s.executions.sweepLost(LOST_GRACE_MS);
    if (lost > 0) s.logger.warn({ lost }, 'executions left running by a stopped worker marked failed');
    // Runs whose queuing failed while the database was away (the caller got 503): never run, now marked failed.
    const held = await s.executions.sweepHeld(LOST_GRACE_MS);
    if (held > 0) s.logger.warn({ held }, 'executions whose queuing failed marked failed (never run)');
    // Async-invoke counts of run trees untouched for a day.
    await s.runLimits.sweep();
    // Idempotency-Keys past their 24 hours.
    await s.idempotency.sweepExpired();
    // Event deliveries whose job was lost or whose attempt was cut short; finished ones past their 30 days.
    const deliveries = await s.eventDeliveries.sweep();
    if (deliveries.requeued + deliveries.cutShort > 0)
      s.logger.warn(deliveries, 'event deliveries queued again by the sweep');
    // Released and never claimed for far too long: their job is gone; it is queued again (a claim runs each once).
    const stale = await s.engine.requeueStale(STALE_QUEUED_MS);
    if (stale > 0) s.logger.warn({ stale }, 'queued executions whose job was lost queued again');
  },
});
