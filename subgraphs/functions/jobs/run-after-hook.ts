// An after-hook runs at least once: a failed run throws and is retried with exponential backoff.
import { defineJob } from '../../../platform/jobs.ts';
import { AFTER_HOOK_RETRIES, HOOK_JOB, type AfterHookJob } from '../services/hooks.ts';
import type { FunctionsServices } from '../services/index.ts';

export const runAfterHookJob = defineJob<FunctionsServices, AfterHookJob>({
  name: HOOK_JOB,
  handler: async (s, data) => await s.hooks.runAfter(data),
  retries: AFTER_HOOK_RETRIES,
  concurrency: 20,
  removeOnComplete: true,
});
