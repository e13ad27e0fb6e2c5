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
  // Short: a data process killed while it held the job (locked a moment before each run) delays the next sweep by
  // this much. A sweep outliving it may meet the next one: harmless, each takes its rows `for update skip locked`.
  lockLifetimeMs: 30_000,
  handler: async (s) => await s.outbox.sweep(),
});
