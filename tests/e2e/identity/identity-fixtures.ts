// Shared set-up of the identity provider's end-to-end tests: a started platform with a real SMTP server
// on loopback as its mail server, a tenant with a project (API key, default OIDC client), and small
// helpers for form posts and the mailbox.
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { asRes, client, type Res } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';
export { nextCode } from '../../support/totp.ts';

export type Mail = { to: string; raw: string; text: string };

/** A real SMTP server that keeps every message it receives. */
export async function startMailbox(): Promise<{
  url: string;
  mails: Mail[];
  waitFor: (to: string, subject: RegExp, timeoutMs?: number) => Promise<Mail>;
  close: () => Promise<void>;
}> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address).join(',');
        mails.push({ to, raw, text: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, subject, timeoutMs = 15_000) {
      const found = await waitFor(() => mails.find((m) => m.to === to && subject.test(m.text)), {
        timeoutMs,
        message: `a mail to ${to} matching ${subject}`,
      });
      mails.splice(mails.indexOf(found), 1);
      return found;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Undoes quoted-printable soft line breaks and =XX escapes (enough for our ASCII mails). */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** The token of a mail's link (`?token=...`). */
export function tokenOf(mail: Mail): string {
  const m = /[?&]token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no token in mail:\n${mail.text}`);
  return m[1]!;
}

export type Project = { id: string; apiKey: string; clientId: string; clientSecret: string; tenantToken: string };

export const REDIRECT_URI = 'https://app.example.com/callback';

/** The scopes a new OIDC client may be issued (DEFAULT_ALLOWED_SCOPES of the tenant subgraph). */
export const DEFAULT_ALLOWED_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'role:*'];

/** Signs up a tenant, creates a project and registers a redirect URI (and `allowedScopes`, when given) on its default OIDC client. */
export async function newProject(
  base: string,
  opts: { public?: boolean; allowedScopes?: string[] } = {},
): Promise<Project> {
  const call = client(base);
  const email = `dev-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery staple';
  expect201(await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } }));
  const login = async () =>
    (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } })).body.access_token as string;
  let tenantToken = await login();
  // A platform started with a 1-second access token lifetime (the expiry tests) may see the token expire between
  // two calls on a busy machine: log in again once.
  const asTenant = async (method: string, path: string, body?: unknown) => {
    let res = await call(method, path, { token: tenantToken, body });
    if (res.status === 401) {
      tenantToken = await login();
      res = await call(method, path, { token: tenantToken, body });
    }
    return res;
  };
  const created = await asTenant('POST', '/auth/api/v1/projects', { name: 'App' });
  expect201(created);
  const project = created.body.project;
  const clients = await asTenant('GET', `/auth/api/v1/projects/${project.id}/oidc-clients`);
  if (clients.status !== 200) throw new Error(`GET oidc clients: ${clients.status} ${JSON.stringify(clients.body)}`);
  const c = clients.body.oidc_clients[0];
  const put = await asTenant('PUT', `/auth/api/v1/projects/${project.id}/oidc-clients/${c.client_id}`, {
    redirect_uris: [REDIRECT_URI, 'https://app.example.com/other?x=1'],
    ...(opts.public ? { public: true } : {}),
    ...(opts.allowedScopes ? { allowed_scopes: opts.allowedScopes } : {}),
  });
  if (put.status !== 200) throw new Error(`PUT oidc client: ${put.status} ${JSON.stringify(put.body)}`);
  return { id: project.id, apiKey: project.api_key, clientId: c.client_id, clientSecret: c.client_secret, tenantToken };
}

/** The project's publishable key (`tpk_...`, the key a browser app holds), as its tenant reads it. */
export async function publishableKey(base: string, p: Project): Promise<string> {
  const res = await client(base)('GET', `/auth/api/v1/projects/${p.id}`, { token: p.tenantToken });
  return res.body.project.publishable_key as string;
}

/** newProject, with the project's publishable key as `pk`. */
export async function newProjectWithPk(
  base: string,
  opts: { public?: boolean; allowedScopes?: string[] } = {},
): Promise<Project & { pk: string }> {
  const p = await newProject(base, opts);
  return { ...p, pk: await publishableKey(base, p) };
}

function expect201(res: Res): void {
  if (res.status !== 201) throw new Error(`expected 201, got ${res.status}: ${JSON.stringify(res.body)}`);
}

/** POSTs form parameters; `basic` sends client_secret_basic. */
export async function postForm(
  base: string,
  path: string,
  params: Record<string, string>,
  opts: { basic?: [string, string]; headers?: Record<string, string>; raw?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...opts.headers };
  if (opts.basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(opts.basic[0])}:${encodeURIComponent(opts.basic[1])}`).toString('base64')}`;
  const res = await fetch(base + path, {
    method: 'POST',
    headers,
    body: opts.raw ?? new URLSearchParams(params).toString(),
    redirect: 'manual',
  });
  return await asRes(res);
}

/** Registers an end-user and returns its credentials. */
export async function registerUser(
  base: string,
  project: Project,
  extra: Record<string, unknown> = {},
): Promise<{ email: string; password: string; id: string }> {
  const email = `user-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'a long enough password';
  const res = await client(base)('POST', '/register', {
    apiKey: project.apiKey,
    body: { email, password, name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', ...extra },
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, password, id: res.body.user.id };
}

/** Password grant with client_secret_post. */
export async function passwordGrant(
  base: string,
  project: Project,
  user: { email: string; password: string },
  extra: Record<string, string> = {},
): Promise<Res> {
  return await postForm(base, '/token', {
    grant_type: 'password',
    username: user.email,
    password: user.password,
    scope: 'openid profile email offline_access',
    client_id: project.clientId,
    client_secret: project.clientSecret,
    ...extra,
  });
}

/** Waits until the TOTP time step changes, so a fresh code is not a replay of the last one. */
/** The identity platform with a mailbox. */
export async function startIdentityPlatform(env: Record<string, string> = {}): Promise<{
  platform: TestPlatform;
  mailbox: Awaited<ReturnType<typeof startMailbox>>;
  base: string;
  close: () => Promise<void>;
}> {
  const mailbox = await startMailbox();
  const platform = await startOneProcess({
    TESSERA_SMTP_URL: mailbox.url,
    TESSERA_MAIL_FROM: 'Tessera Test <idp@example.com>',
    TESSERA_TRUST_PROXY: 'true',
    ...env,
  });
  return {
    platform,
    mailbox,
    base: platform.url,
    close: async () => {
      await platform.close();
      await mailbox.close();
    },
  };
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The hidden fields of the hosted sign-in page's form. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    out[unescapeHtml(m[1]!)] = unescapeHtml(m[2]!);
  return out;
}

/** A browser without JavaScript: opens the authorization URL, fills in the hosted page and returns where it is sent back to. */
export async function signInThroughPage(
  authorizationUrl: string,
  user: { email: string; password: string; totp?: string },
): Promise<{ status: number; location: string | null; html: string }> {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) return { status: page.status, location: page.headers.get('location'), html };
  const fields = {
    ...hiddenFields(html),
    email: user.email,
    password: user.password,
    action: 'sign_in',
    ...(user.totp ? { totp_code: user.totp } : {}),
  };
  const action = new URL('/authorize', authorizationUrl);
  const res = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}
