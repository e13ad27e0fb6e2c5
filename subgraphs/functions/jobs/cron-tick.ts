// One tick of a cron job (scheduled by services/cron.ts per cron entry). A failed tick is not run again later: the
// next tick comes anyway.
import { defineJob } from '../../../platform/jobs.ts';
import { CRON_JOB } from '../services/cron.ts';
import type { FunctionsServices } from '../services/index.ts';

export const cronTickJob = defineJob<FunctionsServices, { cronId: string }>({
  name: CRON_JOB,
  handler: async (s, data) => await s.cron.tick(data),
  retries: 0,
  concurrency: 10,
});
