// The tenant rows of the REST route table, run against the tenant subgraph the way the front door runs
// them (variables from the request, aliases, unwrap, status), so each documented body shape is checked.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse, validate } from 'graphql';
import type { Principal } from '../../../platform/auth.ts';
import { AppError } from '../../../platform/errors.ts';
import type { RouteRow } from '../../../rest-compat/route-types.ts';
import { tenantRoutes } from '../../../rest-compat/routes/tenant.ts';
import { variableTypesOf, variablesFor } from '../../../rest-compat/variables.ts';
import { awayFromStepBoundary, startTenantHarness, totp, type Harness } from '../../../subgraphs/tenant/testing.ts';

type Reply = { status: number; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

let h: Harness;

beforeAll(async () => {
  h = await startTenantHarness();
});

afterAll(async () => {
  await h?.close();
});

function match(row: RouteRow, method: string, path: string): Record<string, string> | undefined {
  if (row.method !== method) return undefined;
  const names: string[] = [];
  const re = new RegExp(`^${row.path.replace(/:([a-z_]+)/g, (_, n: string) => (names.push(n), '([^/]+)'))}$`);
  const m = re.exec(path);
  return m ? Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])])) : undefined;
}

/** One REST call, answered as the front door would. */
async function rest(
  method: string,
  path: string,
  opts: { body?: unknown; query?: Record<string, string>; as?: Principal } = {},
): Promise<Reply> {
  let params: Record<string, string> | undefined;
  const row = tenantRoutes.find((r) => (params = match(r, method, path)));
  if (!row || !params) throw new Error(`no route for ${method} ${path}`);
  let variables: Record<string, unknown>;
  try {
    variables = variablesFor(row, { body: opts.body, params, query: opts.query ?? {} }, variableTypesOf(row));
  } catch (err) {
    if (err instanceof AppError)
      return { status: err.status, body: { error: { code: err.code, message: err.message } } };
    throw err;
  }
  const result = await h.run(row.operation, variables, opts.as);
  const err = result.errors?.[0];
  if (err)
    return {
      status: (err.extensions?.http as { status: number }).status,
      body: { error: { code: err.extensions?.code, message: err.message } },
    };
  const data = result.data as Record<string, unknown>;
  if (row.status === 204) return { status: 204, body: undefined };
  return { status: row.status, body: row.unwrap ? data[Object.keys(data)[0]] : data };
}

describe('tenant route table', () => {
  it('has an operation valid against the tenant schema on every row, with unique ids', () => {
    for (const row of tenantRoutes) {
      expect({ id: row.id, problems: validate(h.subgraph.schema, parse(row.operation)).map((e) => e.message) }).toEqual(
        { id: row.id, problems: [] },
      );
      expect(row.tag).toBe('Tenant management');
      expect(row.id).toMatch(/^tenant\.[a-zA-Z]+(\.[a-zA-Z]+)+$/);
    }
    expect(new Set(tenantRoutes.map((r) => r.id)).size).toBe(tenantRoutes.length);
  });
});

describe('tenant REST bodies', () => {
  it('answers every row in the documented snake_case shape', async () => {
    const email = 'rest@example.com';
    const password = 'a long password';

    const signup = await rest('POST', '/auth/api/v1/tenants/signup', { body: { email, password, name: 'Rest' } });
    expect(signup.status).toBe(201);
    expect(signup.body).toEqual({
      tenant: {
        id: expect.any(String),
        email,
        name: 'Rest',
        mfa_enabled: false,
        recovery_codes_remaining: 0,
        plan: { id: 'free', name: 'Free' },
        created_at: expect.any(String),
      },
    });

    const login = await rest('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
    expect(login).toEqual({
      status: 200,
      body: {
        access_token: expect.any(String),
        refresh_token: expect.stringMatching(/^tsr_/),
        token_type: 'Bearer',
        expires_in: h.config.accessTokenTtl,
        tenant: signup.body.tenant,
      },
    });
    const principalOf = async (token: string): Promise<Principal> => {
      const p = (await h.authenticate({ token })).data?._authenticate as { tenantId: string; sessionId: string };
      return { kind: 'tenant', tenantId: p.tenantId, sessionId: p.sessionId };
    };
    let as = await principalOf(login.body.access_token);

    const refreshed = await rest('POST', '/auth/api/v1/tenant/refresh', {
      body: { refresh_token: login.body.refresh_token },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ token_type: 'Bearer', tenant: { email } });
    expect(refreshed.body.refresh_token).not.toBe(login.body.refresh_token);

    expect(await rest('GET', '/auth/api/v1/tenant', { as })).toEqual({
      status: 200,
      body: { tenant: signup.body.tenant },
    });

    const enroll = await rest('POST', '/auth/api/v1/tenant/mfa/enroll', { as });
    expect(enroll).toEqual({
      status: 200,
      body: { secret: expect.any(String), otpauth_url: expect.stringMatching(/^otpauth:\/\/totp\//) },
    });
    await awayFromStepBoundary();
    expect(
      await rest('POST', '/auth/api/v1/tenant/mfa/verify', { as, body: { code: await totp(enroll.body.secret, -1) } }),
    ).toEqual({
      status: 200,
      body: {
        mfa_enabled: true,
        recovery_codes: expect.arrayContaining([expect.stringMatching(/^[a-z2-9]{5}-[a-z2-9]{5}$/)]),
      },
    });
    const noCode = await rest('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
    expect(noCode).toMatchObject({ status: 401, body: { error: { code: 'MFA_REQUIRED' } } });
    const withCode = await rest('POST', '/auth/api/v1/tenant/login', {
      body: { email, password, totp_code: await totp(enroll.body.secret, 0) },
    });
    expect(withCode.status).toBe(200);
    as = await principalOf(withCode.body.access_token);
    expect(
      await rest('POST', '/auth/api/v1/tenant/mfa/disable', { as, body: { code: await totp(enroll.body.secret, 1) } }),
    ).toEqual({ status: 200, body: { mfa_enabled: false } });

    const created = await rest('POST', '/auth/api/v1/projects', { as, body: { name: 'Shop' } });
    expect(created).toEqual({
      status: 201,
      body: {
        project: {
          id: expect.any(String),
          name: 'Shop',
          api_key: expect.stringMatching(/^tsk_/),
          api_key_prefix: expect.stringMatching(/^tsk_/),
          publishable_key: expect.stringMatching(/^tpk_/),
          publishable_key_prefix: expect.stringMatching(/^tpk_/),
          plan: { id: 'free', name: 'Free' },
          created_at: expect.any(String),
          updated_at: expect.any(String),
          suspended_at: null,
          suspended_reason: null,
        },
      },
    });
    const id: string = created.body.project.id;

    const list = await rest('GET', '/auth/api/v1/projects', { as, query: { first: '10' } });
    expect(list).toEqual({
      status: 200,
      body: {
        projects: [{ ...created.body.project, api_key: undefined, publishable_key: undefined }],
        next_cursor: null,
      },
    });
    expect(list.body.projects[0]).not.toHaveProperty('api_key');
    expect(await rest('GET', '/auth/api/v1/projects', { as, query: { first: 'ten' } })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_FAILED' } },
    });

    expect(await rest('GET', `/auth/api/v1/projects/${id}`, { as })).toEqual({ status: 200, body: created.body });
    const renamed = await rest('PUT', `/auth/api/v1/projects/${id}`, { as, body: { name: 'Shop 2' } });
    expect(renamed).toMatchObject({ status: 200, body: { project: { id, name: 'Shop 2' } } });
    const regenerated = await rest('POST', `/auth/api/v1/projects/${id}/regenerate-key`, { as });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.project.api_key).not.toBe(created.body.project.api_key);

    h.projectTables.set(id, ['orders']);
    expect(
      await rest('POST', `/auth/api/v1/projects/${id}/publications`, { as, body: { table: 'orders', enabled: true } }),
    ).toEqual({
      status: 200,
      body: { publication: { table: 'orders', enabled: true, updated_at: expect.any(String) } },
    });
    expect(await rest('GET', `/auth/api/v1/projects/${id}/publications`, { as })).toEqual({
      status: 200,
      body: { publications: [{ table: 'orders', enabled: true, updated_at: expect.any(String) }] },
    });

    const clients = await rest('GET', `/auth/api/v1/projects/${id}/oidc-clients`, { as });
    expect(clients).toEqual({
      status: 200,
      body: {
        oidc_clients: [
          {
            client_id: expect.any(String),
            client_secret: expect.stringMatching(/^tss_/),
            name: 'Default client',
            redirect_uris: [],
            grant_types: ['password', 'authorization_code', 'client_credentials', 'refresh_token'],
            allowed_scopes: ['openid', 'profile', 'email', 'phone', 'offline_access', 'role:*'],
            public: false,
            default: true,
            created_at: expect.any(String),
          },
        ],
      },
    });
    const clientId: string = clients.body.oidc_clients[0].client_id;
    const updated = await rest('PUT', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}`, {
      as,
      body: { redirect_uris: ['https://app.example.com/cb'] },
    });
    expect(updated).toMatchObject({
      status: 200,
      body: {
        oidc_client: { client_id: clientId, name: 'Default client', redirect_uris: ['https://app.example.com/cb'] },
      },
    });
    const madePublic = await rest('PUT', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}`, {
      as,
      body: { public: true },
    });
    expect(madePublic).toMatchObject({
      status: 200,
      body: { oidc_client: { public: true, redirect_uris: ['https://app.example.com/cb'] } },
    });
    expect(
      await rest('PUT', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}`, { as, body: { public: 'yes' } }),
    ).toMatchObject({ status: 400 });
    const badUri = await rest('PUT', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}`, {
      as,
      body: { redirect_uris: ['https://app.example.com/cb#x'] },
    });
    expect(badUri).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_FAILED' } } });
    const rotated = await rest('POST', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}/rotate-secret`, { as });
    expect(rotated.status).toBe(200);
    expect(rotated.body.oidc_client.client_secret).not.toBe(clients.body.oidc_clients[0].client_secret);

    const added = await rest('POST', `/auth/api/v1/projects/${id}/oidc-clients`, {
      as,
      body: { name: 'Worker', grant_types: ['client_credentials'], allowed_scopes: ['admin:sql'] },
    });
    expect(added).toEqual({
      status: 201,
      body: {
        oidc_client: {
          client_id: expect.stringMatching(/^tsc_/),
          client_secret: expect.stringMatching(/^tss_/),
          name: 'Worker',
          redirect_uris: [],
          grant_types: ['client_credentials'],
          allowed_scopes: ['admin:sql'],
          public: false,
          default: false,
          created_at: expect.any(String),
        },
      },
    });
    expect(
      await rest('PUT', `/auth/api/v1/projects/${id}/oidc-clients/${added.body.oidc_client.client_id}`, {
        as,
        body: { grant_types: ['client_credentials', 'implicit'] },
      }),
    ).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('grantTypes[1]') } },
    });
    expect(
      await rest('POST', `/auth/api/v1/projects/${id}/oidc-clients`, {
        as,
        body: { name: 'SPA', public: true, grant_types: ['client_credentials'] },
      }),
    ).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('grantTypes') } },
    });
    expect(
      await rest('DELETE', `/auth/api/v1/projects/${id}/oidc-clients/${added.body.oidc_client.client_id}`, { as }),
    ).toEqual({ status: 204, body: undefined });
    expect((await rest('GET', `/auth/api/v1/projects/${id}/oidc-clients`, { as })).body.oidc_clients).toHaveLength(1);
    expect(await rest('DELETE', `/auth/api/v1/projects/${id}/oidc-clients/${clientId}`, { as })).toMatchObject({
      status: 409,
      body: { error: { code: 'CONFLICT' } },
    });

    const plans = await rest('GET', '/auth/api/v1/plans');
    expect(plans.status).toBe(200);
    expect(plans.body.plans[0]).toMatchObject({ id: 'self-hosted', price_cents_per_month: null });
    expect(Object.values(plans.body.plans[0].limits).every((v) => v === null)).toBe(true);
    expect(plans.body.plans[1]).toEqual({
      id: 'free',
      name: 'Free',
      description: expect.any(String),
      price_cents_per_month: null,
      limits: {
        max_projects: 3,
        max_queued_function_runs: 50,
        max_storage_bytes: 1024 ** 3,
        max_upload_bytes: 50 * 1024 ** 2,
        max_database_rows: 100_000,
        max_database_bytes: 500 * 1024 ** 2,
        max_function_invocations_per_month: 500_000,
        max_requests_per_minute: 600,
        min_cron_interval_seconds: 10,
        max_cron_jobs: 5,
        max_concurrent_function_runs: 10,
        max_async_invokes_per_run: 100,
        max_realtime_subscribers: 200,
        max_pending_uploads: 100,
        max_database_connections: 5,
        database_cpu_seconds_per_minute: 15,
      },
    });

    expect(await rest('DELETE', `/auth/api/v1/projects/${id}`, { as })).toEqual({ status: 204, body: undefined });
    expect(await rest('GET', `/auth/api/v1/projects/${id}`, { as })).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND' } },
    });
    expect(await rest('POST', '/auth/api/v1/tenant/logout', { as })).toEqual({ status: 204, body: undefined });
    expect((await h.authenticate({ token: withCode.body.access_token })).errors?.[0]?.extensions?.code).toBe(
      'INVALID_TOKEN',
    );
  });
});
