// The platform's own e-mails (end-users' password resets and verifications from the identity provider, developers'
// account mails from the tenant subgraph). A mail is queued as a job of the sending subgraph (its content sealed,
// since it carries a single-use token) and sent over SMTP by whichever instance picks the job up. Where it is sent
// from: `transportFor(projectId)` is the seam for per-project SMTP settings; by default every mail goes through the
// platform's server (TESSERA_SMTP_URL / TESSERA_MAIL_FROM). With no SMTP server configured the job logs the message
// (with its link) at info level instead, so a development setup stays usable.
import nodemailer, { type Transporter } from 'nodemailer';
import type { SecretBox } from './crypto.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Scheduler } from './scheduler.ts';

/** What the queued job carries: the message, sealed. */
export type QueuedMail = { sealed: string };

export type MailMessage<K extends string = string> = {
  /** The project the mail is about (end-users' mails); absent for the platform's own (developer accounts). */
  projectId?: string;
  to: string;
  subject: string;
  text: string;
  /** What the mail is, for logs (`password_reset`, `email_change`, ...). */
  kind: K;
};

/** Where a mail goes out; `null` means: no SMTP server, log it. */
export type MailRoute = { transport: Transporter; from: string } | null;

/** Per-project mail routing (the seam for per-project SMTP settings); the default is the platform's. */
export type MailTransportResolver = (projectId: string | undefined) => Promise<MailRoute>;

export type MailQueue<K extends string = string> = {
  /** Queues a mail; it is sent (or logged) by the job. */
  queue: (message: MailMessage<K>) => Promise<void>;
  /** Sends a queued mail (the job's work); a failure throws, and the job is retried. */
  send: (data: QueuedMail) => Promise<void>;
  close: () => void;
};

/** A mail queue whose mails are the job `job` of the sending subgraph's scheduler. */
export function createMailQueue<K extends string = string>(opts: {
  config: Config;
  logger: Logger;
  box: SecretBox;
  /** The sending subgraph's scheduler, or how to get it when the first mail is queued. */
  scheduler: Scheduler | (() => Scheduler);
  job: string;
  transportFor?: MailTransportResolver;
}): MailQueue<K> {
  const { config, logger, box, job } = opts;
  const scheduler = () => (typeof opts.scheduler === 'function' ? opts.scheduler() : opts.scheduler);
  let platformTransport: Transporter | undefined;
  const platformRoute: MailTransportResolver = async () => {
    if (!config.smtpUrl) return null;
    platformTransport ??= nodemailer.createTransport(config.smtpUrl);
    return { transport: platformTransport, from: config.mailFrom };
  };
  const transportFor = opts.transportFor ?? platformRoute;

  return {
    async queue(message) {
      await scheduler().enqueue(job, { sealed: box.encrypt(JSON.stringify(message)) } satisfies QueuedMail);
    },
    async send(data) {
      const message = JSON.parse(box.decrypt(data.sealed)) as MailMessage<K>;
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
    close() {
      platformTransport?.close();
    },
  };
}
