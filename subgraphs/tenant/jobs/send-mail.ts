// A developer account's mail (password reset, e-mail change) queued by services/account-lifecycle.ts, sent over the
// platform's SMTP server (or logged without one); a failed send is retried with backoff.
import { defineJob } from '../../../platform/jobs.ts';
import type { QueuedMail } from '../../../platform/mail.ts';
import type { TenantServices } from '../services/index.ts';

export const TENANT_MAIL_JOB = 'tenant.mail.send';

export const sendMailJob = defineJob<TenantServices, QueuedMail>({
  name: TENANT_MAIL_JOB,
  handler: async (s, data) => await s.mail.send(data),
  retries: 5,
});
