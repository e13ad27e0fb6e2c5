// E-mails of the identity provider (password reset, e-mail verification, invitations). A mail is queued as the job
// `identity.mail.send` (jobs/send-mail.ts; its content sealed, since it carries a single-use token) and sent over
// SMTP by whichever instance picks the job up. Where it is sent from: `transportFor(projectId)` is the seam for
// the functions domain's per-project SMTP configuration; until that exists every project uses the
// platform default (TESSERA_SMTP_URL / TESSERA_MAIL_FROM). With no SMTP server configured the job logs
// the message (with its link) at info level instead, so a development setup stays usable.
import nodemailer, { type Transporter } from 'nodemailer';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Config } from '../../../platform/config.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';

export const MAIL_JOB = 'identity.mail.send';

/** What the queued job carries: the message, sealed. */
export type QueuedMail = { sealed: string };

export type MailMessage = {
  projectId: string;
  to: string;
  subject: string;
  text: string;
  kind: 'password_reset' | 'email_verification' | 'invitation';
};

/** Where a project's mail goes out; `null` means: no SMTP server, log it. */
export type MailRoute = { transport: Transporter; from: string } | null;

/** Per-project mail routing (the seam for per-project SMTP settings); the default is the platform's. */
export type MailTransportResolver = (projectId: string) => Promise<MailRoute>;

export type MailService = ReturnType<typeof createMailService>;

export function createMailService(opts: {
  config: Config;
  logger: Logger;
  box: SecretBox;
  scheduler: Scheduler;
  transportFor?: MailTransportResolver;
}) {
  const { config, logger, box, scheduler } = opts;
  let platformTransport: Transporter | undefined;
  const platformRoute: MailTransportResolver = async () => {
    if (!config.smtpUrl) return null;
    platformTransport ??= nodemailer.createTransport(config.smtpUrl);
    return { transport: platformTransport, from: config.mailFrom };
  };
  const transportFor = opts.transportFor ?? platformRoute;

  return {
    /** Queues a mail; it is sent (or logged) by the job. */
    async queue(message: MailMessage): Promise<void> {
      await scheduler.enqueue(MAIL_JOB, { sealed: box.encrypt(JSON.stringify(message)) } satisfies QueuedMail);
    },
    /** Sends a queued mail (the job's work); a failure throws, and the job is retried. */
    async send(data: QueuedMail): Promise<void> {
      const message = JSON.parse(box.decrypt(data.sealed)) as MailMessage;
      const route = await transportFor(message.projectId);
      if (!route) {
        logger.info(
          {
            projectId: message.projectId,
            to: message.to,
            subject: message.subject,
            kind: message.kind,
            text: message.text,
          },
          'no SMTP server configured (TESSERA_SMTP_URL): mail logged instead of sent',
        );
        return;
      }
      await route.transport.sendMail({
        from: route.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
      logger.info({ projectId: message.projectId, kind: message.kind }, 'mail sent');
    },
    close(): void {
      platformTransport?.close();
    },
  };
}
