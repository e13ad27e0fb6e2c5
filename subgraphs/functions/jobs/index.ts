// The functions subgraph's background jobs (platform/jobs.ts), one file each; a new job is one more file listed here.
import { defineJobs } from '../../../platform/jobs.ts';
import type { FunctionsServices } from '../services/index.ts';
import { cronTickJob } from './cron-tick.ts';
import { deliverEventJob } from './deliver-event.ts';
import { runAfterHookJob } from './run-after-hook.ts';
import { runExecutionJob } from './run-execution.ts';
import { sendEmailJob } from './send-email.ts';
import { sweepJob } from './sweep.ts';

export { SWEEP_JOB } from './sweep.ts';

export const functionsJobs = defineJobs<FunctionsServices>({
  // Due jobs (queued executions above all) are looked for every half second.
  pollMs: 500,
  jobs: [runExecutionJob, cronTickJob, sendEmailJob, runAfterHookJob, deliverEventJob, sweepJob],
});
