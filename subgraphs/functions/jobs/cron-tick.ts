// One tick of a cron job (scheduled by services/cron.ts per cron entry). A failed tick is not run again later: the
// next tick comes anyway. The lock lives 1.5 s, renewed while the tick runs: a process killed holding it (locked up to
// half a second ahead of the tick, or running it) hands the job to another instance within about 2 s, and the ticks
// it missed run late there (services/cron.ts `tick`); the default 60 s stopped a per-second job for up to a minute.
import { defineJob } from '../../../platform/jobs.ts';
import { CRON_JOB } from '../services/cron.ts';
import type { FunctionsServices } from '../services/index.ts';

export const cronTickJob = defineJob<FunctionsServices, { cronId: string; projectId?: string }>({
  name: CRON_JOB,
  handler: async (s, data, job) =>
    await s.cron.tick(data, {
      ranAt: job.attrs.lastRunAt ?? new Date(),
      schedule: job.attrs.repeatInterval as string | undefined,
      timezone: job.attrs.repeatTimezone,
    }),
  retries: 0,
  concurrency: 10,
  lockLifetimeMs: 1500,
  heartbeat: true,
});
