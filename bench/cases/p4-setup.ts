// Shared set-up of the identity cases (P4, P5): a tenant with a project, the project's default OIDC
// client (confidential: client_secret_basic works) and its API key, made once per run through the
// tenant REST API.
import { client } from '../../tests/support/http.ts';
import type { BenchContext } from './types.ts';

export type IdentityProject = { id: string; apiKey: string; clientId: string; clientSecret: string };

let made: Promise<IdentityProject> | undefined;

export function identityProject(ctx: BenchContext): Promise<IdentityProject> {
  made ??= (async () => {
    const call = client(ctx.tessera);
    const email = `bench-idp-${Date.now()}@example.com`;
    const password = 'bench password 123';
    await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } });
    const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
    const token = login.body.access_token as string;
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'bench identity' } });
    if (created.status !== 201) throw new Error(`create project: ${created.status} ${JSON.stringify(created.body)}`);
    const project = created.body.project;
    const clients = await call('GET', `/auth/api/v1/projects/${project.id}/oidc-clients`, { token });
    const c = clients.body?.oidc_clients?.[0];
    if (!c?.client_secret) throw new Error(`no default OIDC client: ${clients.status} ${JSON.stringify(clients.body)}`);
    return { id: project.id, apiKey: project.api_key, clientId: c.client_id, clientSecret: c.client_secret };
  })();
  return made;
}

/** The Authorization header of client_secret_basic (RFC 6749 §2.3.1: form-encoded id and secret). */
export function basic(clientId: string, clientSecret: string): string {
  const enc = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString('base64')}`;
}

export const FORM = 'application/x-www-form-urlencoded';

/** POSTs a form and returns the JSON answer, failing loudly on anything but 200. */
export async function postForm(
  url: string,
  form: Record<string, string>,
  authorization: string,
): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}
