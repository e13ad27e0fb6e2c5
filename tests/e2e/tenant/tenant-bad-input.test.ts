import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { ROUTE_TABLE } from '../../../rest-compat/route-table.ts';
import { waitFor } from '../../support/wait-for.ts';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

describe('tenant routes refuse bad input with the documented 4xx, never a 500', () => {
  let p: TestPlatform;
  let call: ReturnType<typeof client>;
  let token: string;
  let otherToken: string;
  let projectId: string;
  let apiKey: string;

  beforeAll(async () => {
    p = await startOneProcess();
    call = client(p.url);
    const mk = async (email: string) => {
      await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
      return (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })).body
        .access_token as string;
    };
    token = await mk('owner@example.com');
    otherToken = await mk('other@example.com');
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Mine' } });
    projectId = created.body.project.id;
    apiKey = created.body.project.api_key;
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  const tenantRows = ROUTE_TABLE.filter((r) => r.auth === 'tenant');
  const pathOf = (path: string) => path.replace(':id', UNKNOWN_ID).replace(':client_id', 'unknown-client');

  it.each(tenantRows.map((r) => [r.method, r.path]))(
    '%s %s without a token answers 401 UNAUTHENTICATED',
    async (method, path) => {
      expectError(
        await call(method, pathOf(path), { body: method === 'GET' ? undefined : {} }),
        401,
        'UNAUTHENTICATED',
        /tenant access token/,
      );
    },
  );

  it.each(tenantRows.map((r) => [r.method, r.path]))(
    '%s %s with a garbage token answers 401 INVALID_TOKEN',
    async (method, path) => {
      expectError(
        await call(method, pathOf(path), { token: 'garbage', body: method === 'GET' ? undefined : {} }),
        401,
        'INVALID_TOKEN',
      );
      const forged = 'eyJhbGciOiJFUzI1NiJ9.eyJ0eXAiOiJ0ZW5hbnQiLCJzdWIiOiJ4In0.c2lnbmF0dXJl';
      expectError(
        await call(method, pathOf(path), { token: forged, body: method === 'GET' ? undefined : {} }),
        401,
        'INVALID_TOKEN',
      );
    },
  );

  it.each(tenantRows.map((r) => [r.method, r.path]))(
    '%s %s with a project API key answers 403',
    async (method, path) => {
      expectError(
        await call(method, pathOf(path), { apiKey, body: method === 'GET' ? undefined : {} }),
        403,
        'FORBIDDEN',
      );
    },
  );

  it('refuses an Authorization header that is not a bearer token', async () => {
    expectError(
      await call('GET', '/auth/api/v1/projects', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
      401,
      'INVALID_TOKEN',
      /Bearer/,
    );
  });

  it('refuses an unknown API key (GraphQL-shaped on /graphql)', async () => {
    const res = await call('POST', '/graphql', { apiKey: 'tsk_nope', body: { query: '{ plans { id } }' } });
    expect({ status: res.status, code: res.body?.errors?.[0]?.extensions?.code }).toEqual({
      status: 401,
      code: 'INVALID_API_KEY',
    });
    expectError(await call('GET', '/auth/api/v1/projects', { apiKey: 'tsk_nope' }), 401, 'INVALID_API_KEY');
  });

  describe('signup', () => {
    const path = '/auth/api/v1/tenants/signup';
    it('needs an e-mail', async () =>
      expectError(await call('POST', path, { body: { password: 'a long password' } }), 400, 'BAD_USER_INPUT', /email/));
    it('needs a string e-mail', async () =>
      expectError(
        await call('POST', path, { body: { email: 42, password: 'a long password' } }),
        400,
        'BAD_USER_INPUT',
        /email/,
      ));
    it('needs a well-formed e-mail', async () =>
      expectError(
        await call('POST', path, { body: { email: 'nope', password: 'a long password' } }),
        400,
        'VALIDATION_FAILED',
        /email/,
      ));
    it('needs a long enough password', async () =>
      expectError(
        await call('POST', path, { body: { email: 'x@example.com', password: 'short' } }),
        400,
        'VALIDATION_FAILED',
        /password/,
      ));
    it('refuses unknown fields', async () =>
      expectError(
        await call('POST', path, { body: { email: 'y@example.com', password: 'a long password', admin: true } }),
        400,
        'BAD_USER_INPUT',
        /admin/,
      ));
    it('refuses a taken e-mail with 409', async () =>
      expectError(
        await call('POST', path, { body: { email: 'OWNER@example.com', password: 'a long password' } }),
        409,
        'EMAIL_TAKEN',
      ));
    it('refuses a body that is not JSON', async () =>
      expectError(await call('POST', path, { raw: '{not json' }), 400, 'BAD_REQUEST'));
    it('refuses a JSON array body', async () =>
      expectError(await call('POST', path, { body: [1, 2] }), 400, 'BAD_REQUEST', /object/));
    it('refuses a body over the size limit with 413', async () =>
      expectError(
        await call('POST', path, { body: { email: 'z@example.com', password: 'x'.repeat(2_000_000) } }),
        413,
        'PAYLOAD_TOO_LARGE',
      ));
  });

  describe('login', () => {
    const path = '/auth/api/v1/tenant/login';
    it('gives the same answer for a wrong password and an unknown e-mail', async () => {
      const a = await call('POST', path, { body: { email: 'owner@example.com', password: 'wrong password' } });
      const b = await call('POST', path, { body: { email: 'nobody@example.com', password: 'wrong password' } });
      expectError(a, 401, 'INVALID_CREDENTIALS');
      expectError(b, 401, 'INVALID_CREDENTIALS');
      expect(a.body.error.message).toBe(b.body.error.message);
    });
    it('needs a password', async () =>
      expectError(
        await call('POST', path, { body: { email: 'owner@example.com' } }),
        400,
        'BAD_USER_INPUT',
        /password/,
      ));
    it('refuses a TOTP code of the wrong type', async () =>
      expectError(
        await call('POST', path, {
          body: { email: 'owner@example.com', password: 'a long password', totp_code: 123456 },
        }),
        400,
        'BAD_USER_INPUT',
        /totp_code/,
      ));
  });

  describe('MFA', () => {
    it('cannot verify before enrolling', async () =>
      expectError(
        await call('POST', '/auth/api/v1/tenant/mfa/verify', { token, body: { code: '123456' } }),
        409,
        'MFA_NOT_ENROLLED',
      ));
    it('cannot disable when it is off', async () =>
      expectError(
        await call('POST', '/auth/api/v1/tenant/mfa/disable', { token, body: { code: '123456' } }),
        409,
        'MFA_NOT_ENABLED',
      ));
    it('needs a code', async () =>
      expectError(
        await call('POST', '/auth/api/v1/tenant/mfa/verify', { token, body: {} }),
        400,
        'BAD_USER_INPUT',
        /code/,
      ));
    it('refuses a wrong code after enrolling', async () => {
      expect((await call('POST', '/auth/api/v1/tenant/mfa/enroll', { token: otherToken })).status).toBe(200);
      expectError(
        await call('POST', '/auth/api/v1/tenant/mfa/verify', { token: otherToken, body: { code: '000000' } }),
        401,
        'INVALID_MFA_CODE',
      );
    });
  });

  describe('projects', () => {
    it('needs a name to create', async () =>
      expectError(await call('POST', '/auth/api/v1/projects', { token, body: {} }), 400, 'BAD_USER_INPUT', /name/));
    it('refuses an empty name', async () =>
      expectError(
        await call('POST', '/auth/api/v1/projects', { token, body: { name: '   ' } }),
        400,
        'VALIDATION_FAILED',
        /name/,
      ));
    it('refuses an overlong name', async () =>
      expectError(
        await call('POST', '/auth/api/v1/projects', { token, body: { name: 'x'.repeat(101) } }),
        400,
        'VALIDATION_FAILED',
        /name/,
      ));
    it('refuses a name of the wrong type', async () =>
      expectError(
        await call('POST', '/auth/api/v1/projects', { token, body: { name: 7 } }),
        400,
        'BAD_USER_INPUT',
        /name/,
      ));
    it('refuses a malformed page size', async () =>
      expectError(await call('GET', '/auth/api/v1/projects?first=abc', { token }), 400, 'VALIDATION_FAILED', /first/));

    const foreign: [string, string, unknown][] = [
      ['GET', '/auth/api/v1/projects/:id', undefined],
      ['PUT', '/auth/api/v1/projects/:id', { name: 'Stolen' }],
      ['DELETE', '/auth/api/v1/projects/:id', undefined],
      ['POST', '/auth/api/v1/projects/:id/regenerate-key', undefined],
      ['GET', '/auth/api/v1/projects/:id/publications', undefined],
      ['POST', '/auth/api/v1/projects/:id/publications', { table: 'orders', enabled: true }],
      ['GET', '/auth/api/v1/projects/:id/oidc-clients', undefined],
      ['POST', '/auth/api/v1/projects/:id/oidc-clients', { name: 'Stolen' }],
    ];
    it.each(foreign)("%s %s: another tenant's project is 404", async (method, path, body) => {
      expectError(await call(method, path.replace(':id', projectId), { token: otherToken, body }), 404, 'NOT_FOUND');
    });
    it.each(foreign)('%s %s: an unknown id is 404', async (method, path, body) => {
      expectError(await call(method, path.replace(':id', UNKNOWN_ID), { token, body }), 404, 'NOT_FOUND');
    });
    it.each(foreign)('%s %s: a malformed id is 404, not 500', async (method, path, body) => {
      expectError(await call(method, path.replace(':id', 'not-a-uuid'), { token, body }), 404, 'NOT_FOUND');
    });
    it('leaves the project untouched after the foreign attempts', async () => {
      const got = await call('GET', `/auth/api/v1/projects/${projectId}`, { token });
      expect(got.body.project).toMatchObject({ name: 'Mine', api_key: apiKey });
    });
  });

  describe('publications', () => {
    const path = () => `/auth/api/v1/projects/${projectId}/publications`;
    it('needs a table', async () =>
      expectError(await call('POST', path(), { token, body: { enabled: true } }), 400, 'BAD_USER_INPUT', /table/));
    it('needs enabled as a boolean', async () =>
      expectError(
        await call('POST', path(), { token, body: { table: 'orders', enabled: 'yes' } }),
        400,
        'BAD_USER_INPUT',
        /enabled/,
      ));
    it('refuses a table name that is not an identifier', async () =>
      expectError(
        await call('POST', path(), { token, body: { table: 'orders; drop table x', enabled: true } }),
        400,
        'VALIDATION_FAILED',
        /table/,
      ));
  });

  describe('OIDC clients', () => {
    const path = () => `/auth/api/v1/projects/${projectId}/oidc-clients`;
    it('needs a name', async () =>
      expectError(await call('POST', path(), { token, body: { public: true } }), 400, 'BAD_USER_INPUT', /name/));
    it('refuses an unknown grant type, naming it', async () =>
      expectError(
        await call('POST', path(), { token, body: { name: 'x', grant_types: ['password', 'implicit'] } }),
        400,
        'VALIDATION_FAILED',
        /grantTypes\[1\]/,
      ));
    it("answers another tenant's client, under the other tenant's project or the caller's own, as 404", async () => {
      const before = (await call('GET', path(), { token })).body.oidc_clients[0];
      const theirs = before.client_id as string;
      const own = (await call('POST', '/auth/api/v1/projects', { token: otherToken, body: { name: 'Theirs' } })).body
        .project.id as string;
      for (const [pid, method, suffix, body] of [
        [projectId, 'PUT', '', { name: 'Stolen' }],
        [projectId, 'DELETE', '', undefined],
        [projectId, 'POST', '/rotate-secret', undefined],
        [own, 'PUT', '', { name: 'Stolen' }],
        [own, 'DELETE', '', undefined],
        [own, 'POST', '/rotate-secret', undefined],
      ] as const)
        expectError(
          await call(method, `/auth/api/v1/projects/${pid}/oidc-clients/${theirs}${suffix}`, {
            token: otherToken,
            body,
          }),
          404,
          'NOT_FOUND',
        );
      // Not renamed, not deleted, its secret not rotated.
      expect((await call('GET', path(), { token })).body.oidc_clients).toContainEqual(before);
    });
  });

  it('answers 404 for an unknown path', async () => {
    expectError(await call('GET', '/auth/api/v1/nope', { token }), 404, 'ROUTE_NOT_FOUND');
  });
});

describe('expired tenant tokens', () => {
  it('are refused with 401 INVALID_TOKEN', async () => {
    // Three seconds: the lifetime counts from a whole-second `iat`, so at least 2 s are left for the login's answer and
    // the token's first use; should a machine ever be slower than that, it logs in again until a token is seen working.
    const p = await startOneProcess({ TESSERA_ACCESS_TOKEN_TTL: '3' });
    try {
      const call = client(p.url);
      await call('POST', '/auth/api/v1/tenants/signup', {
        body: { email: 'exp@example.com', password: 'a long password' },
      });
      const token: string = await waitFor(
        async () => {
          const t = (
            await call('POST', '/auth/api/v1/tenant/login', {
              body: { email: 'exp@example.com', password: 'a long password' },
            })
          ).body.access_token as string;
          return (await call('GET', '/auth/api/v1/projects', { token: t })).status === 200 && t;
        },
        { timeoutMs: 20_000, intervalMs: 0, message: 'a token seen working before it expires' },
      );
      const refused = await waitFor(
        async () => {
          const r = await call('GET', '/auth/api/v1/projects', { token });
          return r.status !== 200 && r;
        },
        { timeoutMs: 15_000, intervalMs: 100, message: 'the token to expire' },
      );
      expectError(refused, 401, 'INVALID_TOKEN');
    } finally {
      await p.close();
    }
  }, 60_000);
});
