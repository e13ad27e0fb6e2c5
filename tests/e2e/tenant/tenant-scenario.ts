// The tenant end-to-end scenario, run against a started platform in each mode.
import { expect } from '@jest/globals';
import { client } from '../../support/http.ts';
import { nextCode } from '../identity/identity-fixtures.ts';

/** signup → login → MFA → projects → key → publications → plans → logout, over HTTP. */
export async function tenantScenario(base: string): Promise<void> {
  const call = client(base);
  const email = `dev-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery staple';

  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password, name: 'Dev' } });
  expect(signup.status).toBe(201);
  expect(signup.body.tenant).toMatchObject({ email, name: 'Dev', mfa_enabled: false });
  expect(signup.headers.get('x-request-id')).toBeTruthy();

  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  expect(login.status).toBe(200);
  expect(login.body).toMatchObject({ token_type: 'Bearer', tenant: { email } });
  expect(typeof login.body.access_token).toBe('string');
  expect(typeof login.body.refresh_token).toBe('string');
  expect(login.body.expires_in).toBeGreaterThan(0);
  let token: string = login.body.access_token;

  // MFA: enroll, verify, and from then on login needs a code.
  const enroll = await call('POST', '/auth/api/v1/tenant/mfa/enroll', { token });
  expect(enroll.status).toBe(200);
  expect(enroll.body.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
  const secret: string = enroll.body.secret;
  const code1 = await nextCode(secret);
  const verify = await call('POST', '/auth/api/v1/tenant/mfa/verify', { token, body: { code: code1 } });
  expect(verify.status).toBe(200);
  expect(verify.body.mfa_enabled).toBe(true);

  const noCode = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  expect(noCode.status).toBe(401);
  expect(noCode.body.error.code).toBe('MFA_REQUIRED');
  const replay = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password, totp_code: code1 } });
  expect(replay.status).toBe(401);
  expect(replay.body.error.code).toBe('INVALID_MFA_CODE');
  const code2 = await nextCode(secret, code1);
  const mfaLogin = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password, totp_code: code2 } });
  expect(mfaLogin.status).toBe(200);
  token = mfaLogin.body.access_token;

  // Projects.
  const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Shop' } });
  expect(created.status).toBe(201);
  const project = created.body.project;
  expect(project).toMatchObject({ name: 'Shop' });
  expect(project.api_key).toMatch(/^tsk_/);

  const renamed = await call('PUT', `/auth/api/v1/projects/${project.id}`, { token, body: { name: 'Shop 2' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body.project.name).toBe('Shop 2');

  const list = await call('GET', '/auth/api/v1/projects', { token });
  expect(list.status).toBe(200);
  expect(list.body.projects.map((p: { id: string }) => p.id)).toEqual([project.id]);
  expect(list.body).toHaveProperty('next_cursor');

  const got = await call('GET', `/auth/api/v1/projects/${project.id}`, { token });
  expect(got.status).toBe(200);
  expect(got.body.project).toMatchObject({ id: project.id, name: 'Shop 2', api_key: project.api_key });

  // The API key authenticates; after regeneration the old one is refused at once.
  const withKey = await call('POST', '/graphql', { apiKey: project.api_key, body: { query: '{ plans { id } }' } });
  expect(withKey.status).toBe(200);
  const regen = await call('POST', `/auth/api/v1/projects/${project.id}/regenerate-key`, { token });
  expect(regen.status).toBe(200);
  expect(regen.body.project.api_key).not.toBe(project.api_key);
  const oldKey = await call('POST', '/graphql', { apiKey: project.api_key, body: { query: '{ plans { id } }' } });
  expect(oldKey.status).toBe(401);
  const newKey = await call('POST', '/graphql', {
    apiKey: regen.body.project.api_key,
    body: { query: '{ plans { id } }' },
  });
  expect(newKey.status).toBe(200);

  // Publications: only for a table the project's database has (the tenant subgraph asks the data domain).
  const unknown = await call('POST', `/auth/api/v1/projects/${project.id}/publications`, {
    token,
    body: { table: 'orders', enabled: true },
  });
  expect(unknown.status).toBe(400);
  expect(unknown.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('"orders"') });
  const ordersTable = await call('POST', '/v1/rawSQL', {
    apiKey: regen.body.project.api_key,
    body: { sql: 'create table orders (id serial primary key)' },
  });
  expect(ordersTable.status).toBe(200);
  const toggled = await call('POST', `/auth/api/v1/projects/${project.id}/publications`, {
    token,
    body: { table: 'orders', enabled: true },
  });
  expect(toggled.status).toBe(200);
  expect(toggled.body.publication).toMatchObject({ table: 'orders', enabled: true });
  const pubs = await call('GET', `/auth/api/v1/projects/${project.id}/publications`, { token });
  expect(pubs.status).toBe(200);
  expect(pubs.body.publications).toEqual([expect.objectContaining({ table: 'orders', enabled: true })]);

  // Plans are public.
  const plans = await call('GET', '/auth/api/v1/plans');
  expect(plans.status).toBe(200);
  expect(plans.body.plans.length).toBeGreaterThanOrEqual(2);
  expect(plans.body.plans[0].limits).toBeDefined();

  // A field from another subgraph in one query (federation across tenant and data/identity).
  const fed = await call('POST', '/graphql', {
    token,
    body: {
      query: 'query($id: ID!) { project(id: $id) { name databaseSchema issuer webhookBaseUrl } }',
      variables: { id: project.id },
    },
  });
  expect(fed.status).toBe(200);
  expect(fed.body.data.project).toMatchObject({ name: 'Shop 2', databaseSchema: `p_${project.id.replace(/-/g, '')}` });
  expect(fed.body.data.project.issuer).toMatch(/^http/);
  expect(fed.body.data.project.webhookBaseUrl).toContain(`/webhooks/${project.id}`);

  // Delete, then it is gone.
  const del = await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token });
  expect(del.status).toBe(204);
  const gone = await call('GET', `/auth/api/v1/projects/${project.id}`, { token });
  expect(gone.status).toBe(404);
  expect(gone.body.error.code).toBe('NOT_FOUND');

  // Logout: the token stops working at once.
  const logout = await call('POST', '/auth/api/v1/tenant/logout', { token });
  expect(logout.status).toBe(204);
  const after = await call('GET', '/auth/api/v1/projects', { token });
  expect(after.status).toBe(401);
  expect(after.body.error.code).toBe('INVALID_TOKEN');
}
