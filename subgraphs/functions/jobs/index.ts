// The functions subgraph's background jobs, on its own scheduler (Agenda on the platform database).
import { CRON_JOB } from '../services/cron.ts';
import { EMAIL_JOB, type Mail } from '../services/email.ts';
import { EXECUTION_JOB } from '../services/engine.ts';
import type { FunctionsServices } from '../services/index.ts';

/** Defines the jobs and starts processing them. */
export async function startJobs(s: FunctionsServices): Promise<void> {
  // A queued execution runs once: the handler claims it (queued → running) before running.
  s.scheduler.define<{ executionId: string }>(EXECUTION_JOB, async (data) => await s.engine.runQueued(data.executionId), { retries: 3, concurrency: 20 });
  // A failed tick is not run again later: the next tick comes anyway.
  s.scheduler.define<{ cronId: string }>(CRON_JOB, async (data) => await s.cron.tick(data), { retries: 0, concurrency: 10 });
  s.scheduler.define<{ projectId: string; mail: Mail }>(EMAIL_JOB, async (data) => await s.email.sendQueued(data), { retries: 5, concurrency: 5 });
  await s.scheduler.start();
}
