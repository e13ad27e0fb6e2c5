// A password-reset or verification mail queued by services/mail.ts, sent over SMTP (or logged without a server);
// a failed send is retried with backoff.
import { defineJob } from '../../../platform/jobs.ts';
import type { IdentityServices } from '../services/index.ts';
import { MAIL_JOB, type QueuedMail } from '../services/mail.ts';

export const sendMailJob = defineJob<IdentityServices, QueuedMail>({
  name: MAIL_JOB,
  handler: async (s, data) => await s.mail.send(data),
  retries: 5,
});
