// E-mail: templates with `{{ variables }}`, the project's SMTP configuration (password sealed, never
// returned), and sending through a queued job (`functions.email.send`). A project's mail goes out only through
// its own SMTP configuration: without one an Email step fails with 409 EMAIL_NOT_CONFIGURED. The platform's
// sender (TESSERA_SMTP_URL, TESSERA_MAIL_FROM) carries the identity provider's own mails only, never a
// function's: otherwise any project could send whatever it likes, to anyone, from the platform's address.
import crypto from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../../platform/config.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';
import { OutboundRefused, resolveChecked } from './outbound.ts';
import { isUniqueViolation, type Sql } from './sql.ts';
import { mailVariables, renderMailText, TemplateError } from './templates.ts';
import { optionalText, requiredText } from './validation.ts';
import { isUuid } from '../../../platform/ids.ts';

export const EMAIL_JOB = 'functions.email.send';
const TEMPLATE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SUBJECT_MAX = 998;
const BODY_MAX = 512 * 1024;
const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

export type EmailTemplate = {
  id: string;
  projectId: string;
  name: string;
  subject: string;
  html: string;
  text: string;
  variables: string[];
  createdAt: Date;
  updatedAt: Date;
};
export type SmtpSettings = {
  host: string;
  port: number;
  secure: boolean;
  user: string | null;
  password: string | null;
  from: string;
};
export type Mail = { to: string[]; subject: string; html: string; text: string };

type Row = Record<string, unknown>;

function variablesOf(t: { subject: string; html: string; text: string }): string[] {
  return [
    ...new Set([
      ...mailVariables(t.subject, 'subject'),
      ...mailVariables(t.html, 'html'),
      ...mailVariables(t.text, 'text'),
    ]),
  ].sort();
}

function toTemplate(r: Row): EmailTemplate {
  const t = { subject: r.subject as string, html: r.html as string, text: r.text as string };
  return {
    id: r.id as string,
    projectId: r.project_id as string,
    name: r.name as string,
    ...t,
    variables: variablesOf(t),
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
  };
}

/** Checks a template's fields and that its placeholders parse (errors name the field). */
function checkTemplate(input: { name?: unknown; subject?: unknown; html?: unknown; text?: unknown }) {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (!TEMPLATE_NAME.test(name))
    throw errors.validation('name', 'must use letters, digits, _, - and . (at most 64 characters)');
  const subject = requiredText('subject', input.subject, SUBJECT_MAX);
  const html = input.html === undefined || input.html === null ? '' : requiredText('html', input.html, BODY_MAX, false);
  const text = input.text === undefined || input.text === null ? '' : requiredText('text', input.text, BODY_MAX, false);
  if (!html && !text) throw errors.validation('html', 'html or text is required');
  try {
    variablesOf({ subject, html, text });
  } catch (err) {
    if (err instanceof TemplateError) throw errors.validation(err.path, err.message);
    throw err;
  }
  return { name, subject, html, text };
}

function render(t: Pick<EmailTemplate, 'subject' | 'html' | 'text'>, variables: Record<string, unknown>) {
  try {
    return {
      subject: renderMailText(t.subject, variables, false, 'subject').replace(/[\r\n]+/g, ' '),
      html: renderMailText(t.html, variables, true, 'html'),
      text: renderMailText(t.text, variables, false, 'text'),
    };
  } catch (err) {
    if (err instanceof TemplateError) throw errors.validation(`variables (${err.path})`, err.message);
    throw err;
  }
}

export type EmailService = ReturnType<typeof createEmailService>;

/** Creates the e-mail service. */
export function createEmailService({
  sql,
  box,
  config,
  scheduler,
  logger,
}: {
  sql: Sql;
  box: SecretBox;
  config: Config;
  scheduler: Scheduler;
  logger: Logger;
}) {
  const notFound = (id: string) => errors.notFound('email template', id.slice(0, 100));

  const getTemplate = async (projectId: string, id: string): Promise<EmailTemplate> => {
    if (!isUuid(id)) throw notFound(id);
    const rows = await sql.rows('select * from email_templates where id = ? and project_id = ?', [id, projectId]);
    if (!rows[0]) throw notFound(id);
    return toTemplate(rows[0]);
  };

  /** The project's stored SMTP row, its password still sealed. */
  const storedConfig = async (projectId: string) => {
    const r = (await sql.rows('select * from email_configs where project_id = ?', [projectId]))[0];
    if (!r) return null;
    return {
      host: r.host as string,
      port: Number(r.port),
      secure: Boolean(r.secure),
      user: (r.username as string | null) ?? null,
      from: r.from_address as string,
      passwordSealed: (r.password_sealed as string | null) ?? null,
      updatedAt: new Date(r.updated_at as string),
    };
  };

  const settings = async (projectId: string): Promise<SmtpSettings | null> => {
    const c = await storedConfig(projectId);
    if (!c) return null;
    const { host, port, secure, user, from, passwordSealed } = c;
    return { host, port, secure, user, from, password: passwordSealed ? box.decrypt(passwordSealed) : null };
  };

  const notConfigured = () => new AppError('EMAIL_NOT_CONFIGURED');

  /** Sends one mail now with the project's own SMTP settings; EMAIL_NOT_CONFIGURED without them. */
  const deliver = async (projectId: string, mail: Mail): Promise<{ messageId: string | null; via: string }> => {
    const s = await settings(projectId);
    if (!s) throw notConfigured();
    let address: string;
    try {
      address = (await resolveChecked(s.host, config.functionsAllowPrivateNetworks))[0]!.address;
    } catch (err) {
      if (err instanceof OutboundRefused) throw new AppError('UPSTREAM_FAILED', `SMTP server: ${err.message}`);
      throw err;
    }
    const transport: Transporter = nodemailer.createTransport({
      host: address,
      port: s.port,
      secure: s.secure,
      auth: s.user ? { user: s.user, pass: s.password ?? '' } : undefined,
      tls: { servername: s.host },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    const from = s.from;
    const via = `${s.host}:${s.port}`;
    try {
      const info = await transport.sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        html: mail.html || undefined,
        text: mail.text || undefined,
      });
      return { messageId: (info.messageId as string | undefined) ?? null, via };
    } catch (err) {
      throw new AppError('UPSTREAM_FAILED', `SMTP server ${via}: ${(err as Error).message}`);
    } finally {
      transport.close();
    }
  };

  return {
    async createTemplate(projectId: string, input: Record<string, unknown>): Promise<EmailTemplate> {
      const t = checkTemplate(input);
      const now = new Date();
      try {
        const rows = await sql.rows(
          'insert into email_templates (id, project_id, name, subject, html, text, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?) returning *',
          [crypto.randomUUID(), projectId, t.name, t.subject, t.html, t.text, now, now],
        );
        return toTemplate(rows[0]!);
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`An e-mail template named "${t.name}" already exists`, { field: 'name', name: t.name });
        throw err;
      }
    },

    async updateTemplate(projectId: string, id: unknown, input: Record<string, unknown>): Promise<EmailTemplate> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the template id, as ?id= or in the body)');
      const current = await getTemplate(projectId, id);
      const t = checkTemplate({
        name: current.name,
        subject: current.subject,
        html: current.html,
        text: current.text,
        ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined && v !== null)),
      });
      try {
        const rows = await sql.rows(
          'update email_templates set name = ?, subject = ?, html = ?, text = ?, updated_at = ? where id = ? and project_id = ? returning *',
          [t.name, t.subject, t.html, t.text, new Date(), id, projectId],
        );
        return toTemplate(rows[0]!);
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`An e-mail template named "${t.name}" already exists`, { field: 'name', name: t.name });
        throw err;
      }
    },

    getTemplate,

    async listTemplates(projectId: string): Promise<EmailTemplate[]> {
      return (await sql.rows('select * from email_templates where project_id = ? order by name', [projectId])).map(
        toTemplate,
      );
    },

    async deleteTemplate(projectId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the template id, as ?id= or in the body)');
      await getTemplate(projectId, id);
      await sql.run('delete from email_templates where id = ? and project_id = ?', [id, projectId]);
    },

    /** Renders a template with variables, sending nothing. */
    async preview(projectId: string, id: string, variables: unknown) {
      if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
        throw errors.validation('variables', 'must be an object');
      const t = await getTemplate(projectId, id);
      return render(t, (variables ?? {}) as Record<string, unknown>);
    },

    /** The Email step: renders the named template and queues the mail (not in a dry run); EMAIL_NOT_CONFIGURED without the project's SMTP settings. */
    async queueFromStep(
      projectId: string,
      m: { template: string; to: string[]; variables: Record<string, unknown> },
      dryRun: boolean,
    ): Promise<Record<string, unknown>> {
      const configured = await sql.rows('select 1 from email_configs where project_id = ?', [projectId]);
      if (!configured[0]) throw notConfigured();
      const rows = await sql.rows('select * from email_templates where project_id = ? and name = ?', [
        projectId,
        m.template,
      ]);
      if (!rows[0]) throw new Error(`no e-mail template named "${m.template}"`);
      const mail = { to: m.to, ...render(toTemplate(rows[0]), m.variables) };
      if (!dryRun) await scheduler.enqueue(EMAIL_JOB, { projectId, mail });
      return { queued: !dryRun, template: m.template, to: m.to, subject: mail.subject };
    },

    /** The job (a configuration deleted since the mail was queued: the mail is dropped, logged). */
    async sendQueued(data: { projectId: string; mail: Mail }): Promise<void> {
      let r: { messageId: string | null; via: string };
      try {
        r = await deliver(data.projectId, data.mail);
      } catch (err) {
        if (err instanceof AppError && err.code === 'EMAIL_NOT_CONFIGURED') {
          logger.warn(
            { projectId: data.projectId },
            'e-mail dropped: the project removed its SMTP configuration after the mail was queued',
          );
          return;
        }
        throw err;
      }
      logger.info({ projectId: data.projectId, to: data.mail.to, via: r.via, messageId: r.messageId }, 'e-mail sent');
    },

    async getConfig(projectId: string) {
      const c = await storedConfig(projectId);
      if (!c) return null;
      const { passwordSealed, ...shown } = c;
      return { ...shown, hasPassword: Boolean(passwordSealed) };
    },

    /** Creates or replaces the SMTP configuration. A password left out keeps the stored one. */
    async setConfig(
      projectId: string,
      input: { host?: unknown; port?: unknown; secure?: unknown; user?: unknown; password?: unknown; from?: unknown },
    ) {
      const host = requiredText('host', input.host, 253);
      if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) throw errors.validation('host', 'must be a host name or an IP address');
      const port = input.port ?? 587;
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
        throw errors.validation('port', 'must be a whole number from 1 to 65535');
      if (input.secure !== undefined && input.secure !== null && typeof input.secure !== 'boolean')
        throw errors.validation('secure', 'must be true or false');
      const secure = input.secure === undefined || input.secure === null ? port === 465 : input.secure;
      const user = optionalText('user', input.user, 320) || null;
      if (input.password !== undefined && input.password !== null && typeof input.password !== 'string')
        throw errors.validation('password', 'must be a string');
      const from = requiredText('from', input.from, 320);
      const address = /<([^>]+)>\s*$/.exec(from)?.[1] ?? from;
      if (!ADDRESS.test(address))
        throw errors.validation('from', 'must be an e-mail address, optionally with a name: "Shop <shop@example.com>"');
      const now = new Date();
      const sealed = typeof input.password === 'string' && input.password !== '' ? box.encrypt(input.password) : null;
      await sql.run(
        `insert into email_configs (project_id, host, port, secure, username, password_sealed, from_address, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (project_id) do update set host = excluded.host, port = excluded.port, secure = excluded.secure, username = excluded.username,
           password_sealed = coalesce(excluded.password_sealed, case when excluded.username is null then null else email_configs.password_sealed end),
           from_address = excluded.from_address, updated_at = excluded.updated_at`,
        [projectId, host, port, secure, user, sealed, from, now, now],
      );
      return (await this.getConfig(projectId))!;
    },

    async deleteConfig(projectId: string): Promise<void> {
      const n = await sql.run('delete from email_configs where project_id = ?', [projectId]);
      if (n === 0) throw errors.notFound('email config');
    },

    /** Sends a test mail now (not queued), so the answer says whether the SMTP server took it. */
    async testConfig(projectId: string, to: unknown) {
      const address = requiredText('to', to, 320);
      if (!ADDRESS.test(address)) throw errors.validation('to', 'must be an e-mail address');
      if (!(await settings(projectId))) throw errors.notFound('email config');
      const r = await deliver(projectId, {
        to: [address],
        subject: 'Tessera test e-mail',
        text: 'Your project can send e-mail through this SMTP server.',
        html: '',
      });
      return { sent: true, messageId: r.messageId };
    },

    /** For the identity domain (internal): the project's SMTP settings with the password, or null. */
    settings,
  };
}
