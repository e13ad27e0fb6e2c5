// An e-mail step's mail, sent over the project's SMTP settings (services/email.ts), retried when the server fails.
import { defineJob } from '../../../platform/jobs.ts';
import { EMAIL_JOB, type Mail } from '../services/email.ts';
import type { FunctionsServices } from '../services/index.ts';

export const sendEmailJob = defineJob<FunctionsServices, { projectId: string; mail: Mail }>({
  name: EMAIL_JOB,
  handler: async (s, data) => await s.email.sendQueued(data),
  retries: 5,
  concurrency: 5,
});
