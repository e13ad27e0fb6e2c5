// E-mails of the identity provider (password reset, e-mail verification, invitations): the platform's mail queue
// (platform/mail.ts) under this subgraph's job `identity.mail.send` (jobs/send-mail.ts). Until per-project SMTP
// settings reach the identity provider every project's mails go through the platform's server.
import {
  createMailQueue,
  type MailMessage,
  type MailQueue,
  type MailTransportResolver,
} from '../../../platform/mail.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Config } from '../../../platform/config.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';

export type { QueuedMail } from '../../../platform/mail.ts';

export const MAIL_JOB = 'identity.mail.send';

type Kind = 'password_reset' | 'email_verification' | 'invitation';

/** An end-user's mail: always about a project. */
export type IdentityMailMessage = MailMessage<Kind> & { projectId: string };

export type MailService = MailQueue<Kind>;

export function createMailService(opts: {
  config: Config;
  logger: Logger;
  box: SecretBox;
  scheduler: Scheduler;
  transportFor?: MailTransportResolver;
}): MailService {
  return createMailQueue<Kind>({ ...opts, job: MAIL_JOB });
}
