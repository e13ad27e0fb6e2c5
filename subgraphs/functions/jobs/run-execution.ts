// A queued execution runs once: the handler claims it (queued → running) before running. Its job row goes once it
// succeeded (the execution row is the record): thousands of finished rows would slow every lock query of the job
// name. Each process locks at most twice what it can run, leaving the rest to other workers. A job may name several
// executions (enqueued together); they run side by side.
import { defineJob } from '../../../platform/jobs.ts';
import { EXECUTION_JOB, type QueuedJob } from '../services/engine.ts';
import type { FunctionsServices } from '../services/index.ts';

/** Queued executions one process runs at a time. */
const EXECUTION_CONCURRENCY = 20;

export const runExecutionJob = defineJob<FunctionsServices, QueuedJob>({
  name: EXECUTION_JOB,
  handler: async (s, data) => await s.engine.runQueued(data),
  retries: 3,
  concurrency: EXECUTION_CONCURRENCY,
  removeOnComplete: true,
  lockLimit: 2 * EXECUTION_CONCURRENCY,
});
