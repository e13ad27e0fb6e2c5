// Every 10 s, on one data instance at a time: after-hook outbox rows whose request did not hand them off (the
// functions subgraph was unreachable, or the process died after the commit) are handed off now
// (services/hook-outbox.ts). Each row keeps its own retry time, so a failed sweep is not retried: the next comes.
import { defineJob } from '../../../platform/jobs.ts';
import type { DataServices } from '../services/index.ts';

export const HOOK_OUTBOX_SWEEP_JOB = 'data.hook-outbox.sweep';

export const sweepHookOutboxJob = defineJob<DataServices>({
  name: HOOK_OUTBOX_SWEEP_JOB,
  every: '10 seconds',
  retries: 0,
  concurrency: 1,
  // A sweep visits at most 50 projects of 20 batches each; one still running after this long is presumed lost.
  lockLifetimeMs: 5 * 60_000,
  handler: async (s) => await s.outbox.sweep(),
});
