// CORS over HTTP: preflights and actual answers for allowed and refused origins, per project and platform-wide
// (TESSERA_CORS_ORIGINS); the project's rule set through REST and GraphQL with its failure paths; the OIDC endpoints
// a public client calls; same-origin pages; and never a credentialed wildcard.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig, ConfigError } from '../../../platform/config.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { newProjectWithPk, type Project } from '../identity/identity-fixtures.ts';
import { connectOutcome, wsClient } from '../data/data-support.ts';

const APP = 'https://app.example.com';
const ADMIN = 'https://admin.example.com';
const EVIL = 'https://evil.example.net';

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let a: Project & { pk: string };
let b: Project & { pk: string };

const preflight = (path: string, origin: string, headers = 'x-api-key, content-type', method = 'POST') =>
  fetch(platform.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });

beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_CORS_ORIGINS: ADMIN });
  call = client(platform.url);
  a = await newProjectWithPk(platform.url);
  b = await newProjectWithPk(platform.url);
  const set = await call('PUT', `/auth/api/v1/projects/${a.id}/cors`, {
    token: a.tenantToken,
    body: { allowed_origins: [APP], exposed_headers: ['X-Custom'], max_age: 120 },
  });
  expect(set.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

describe('a project CORS rule', () => {
  it('is read and replaced by its tenant over REST and GraphQL', async () => {
    const got = await call('GET', `/auth/api/v1/projects/${a.id}/cors`, { token: a.tenantToken });
    expect(got.status).toBe(200);
    expect(got.body.cors).toMatchObject({
      allowed_origins: [APP],
      allowed_methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      exposed_headers: ['X-Custom'],
      max_age: 120,
      allow_credentials: false,
    });
    const none = await call('GET', `/auth/api/v1/projects/${b.id}/cors`, { token: b.tenantToken });
    expect(none.body.cors).toMatchObject({ allowed_origins: [], updated_at: null });
    const gql = await call('POST', '/graphql', {
      token: b.tenantToken,
      body: {
        query: `mutation { setProjectCors(projectId: "${b.id}", input: {allowedOrigins: ["HTTPS://Shop.Example.com/"], allowCredentials: true}) { allowedOrigins allowCredentials } }`,
      },
    });
    expect(gql.body.data.setProjectCors).toEqual({
      allowedOrigins: ['https://shop.example.com'],
      allowCredentials: true,
    });
  });

  it('refuses bad rules with 400 naming the field, and no credentialed wildcard', async () => {
    const cases: [unknown, string][] = [
      [{ allowed_origins: ['https://app.example.com/path'] }, 'allowed_origins'],
      [{ allowed_origins: ['ftp://x.example.com'] }, 'allowed_origins'],
      [{ allowed_origins: ['not an origin'] }, 'allowed_origins'],
      [{ allowed_origins: ['*'], allow_credentials: true }, 'allowed_origins'],
      [{ allowed_origins: [APP], allowed_methods: ['TRACE'] }, 'allowed_methods'],
      [{ allowed_origins: [APP], allowed_headers: ['bad header'] }, 'allowed_headers'],
      [{ allowed_origins: [APP], max_age: 10 ** 6 }, 'max_age'],
      [{ allowed_origins: [42] }, 'allowed_origins'],
    ];
    for (const [body, field] of cases) {
      const res = await call('PUT', `/auth/api/v1/projects/${b.id}/cors`, { token: b.tenantToken, body });
      expect([res.status, JSON.stringify(body)]).toEqual([400, JSON.stringify(body)]);
      // Our checks answer VALIDATION_FAILED; a value of the wrong GraphQL type is refused by the schema (BAD_USER_INPUT).
      expect(['VALIDATION_FAILED', 'BAD_USER_INPUT']).toContain(res.body.error.code);
      expect(res.body.error.message).toMatch(
        new RegExp(`${field}|${field.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}`),
      );
    }
    expect((await call('PUT', `/auth/api/v1/projects/${b.id}/cors`, { token: b.tenantToken, raw: '{' })).status).toBe(
      400,
    );
  });

  it('is refused to other credentials: none, another tenant, the project keys; unknown projects are 404', async () => {
    expect((await call('GET', `/auth/api/v1/projects/${a.id}/cors`)).status).toBe(401);
    expect((await call('GET', `/auth/api/v1/projects/${a.id}/cors`, { token: b.tenantToken })).status).toBe(404);
    expect(
      (
        await call('PUT', `/auth/api/v1/projects/${a.id}/cors`, {
          token: b.tenantToken,
          body: { allowed_origins: [EVIL] },
        })
      ).status,
    ).toBe(404);
    expect(
      (await call('GET', '/auth/api/v1/projects/00000000-0000-4000-8000-000000000000/cors', { token: a.tenantToken }))
        .status,
    ).toBe(404);
    expect((await call('GET', `/auth/api/v1/projects/${a.id}/cors`, { apiKey: a.apiKey })).status).toBe(403);
    const pk = await call('PUT', `/auth/api/v1/projects/${a.id}/cors`, {
      apiKey: a.pk,
      body: { allowed_origins: [EVIL] },
    });
    expect(pk.status).toBe(403);
    expect(pk.body.error.details).toEqual({ key_kind: 'publishable' });
  });
});

describe('preflights', () => {
  it('are answered for an origin a project allows, with methods, headers and max age', async () => {
    const res = await preflight('/v1/find', APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['x-api-key', 'authorization', 'content-type', 'idempotency-key', 'apollo-require-preflight'])
      expect(allowed).toContain(h);
    expect(res.headers.get('access-control-max-age')).toBe('120');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it('are refused for an origin nobody allows, without CORS headers', async () => {
    const res = await preflight('/v1/find', EVIL);
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect((await res.json()).error.code).toBe('ORIGIN_NOT_ALLOWED');
  });

  it("of tenant management are answered only for the platform-wide origins, never for a project's (issue 28)", async () => {
    for (const path of ['/auth/api/v1/tenant/login', '/auth/api/v1/tenants/signup', '/auth/api/v1/tenant/refresh']) {
      const res = await preflight(path, APP);
      expect({ path, status: res.status, acao: res.headers.get('access-control-allow-origin') }).toEqual({
        path,
        status: 403,
        acao: null,
      });
      expect((await res.json()).error.message).toMatch(/tenant management/);
      expect((await preflight(path, ADMIN)).status).toBe(204);
    }
    // A sign-in sent anyway (a simple request needs no preflight) runs, but the page cannot read its tokens.
    const login = await fetch(`${platform.url}/auth/api/v1/tenant/login`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 'whatever it is' }),
    });
    expect(login.headers.get('access-control-allow-origin')).toBeNull();
    // The project's own app keeps its data API.
    expect((await preflight('/v1/find', APP)).status).toBe(204);
  });

  it('take the platform-wide origins with the platform max age', async () => {
    const res = await preflight('/auth/api/v1/projects', ADMIN, 'authorization', 'GET');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ADMIN);
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });
});

describe('actual requests', () => {
  it("are answered with CORS headers when the credential's project allows the origin", async () => {
    const res = await fetch(`${platform.url}/v1/find`, {
      method: 'POST',
      headers: { origin: APP, 'x-api-key': a.pk, 'content-type': 'application/json' },
      body: JSON.stringify({ table: 'nothing' }),
    });
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    const exposed = res.headers.get('access-control-expose-headers')!;
    for (const h of ['X-Request-Id', 'ETag', 'Content-Range', 'X-Custom']) expect(exposed).toContain(h);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.status).toBe(404); // the table does not exist: the request ran
  });

  it("are refused before they run when the credential's project does not allow the origin (and the refusal is readable)", async () => {
    const res = await call('POST', '/register', {
      apiKey: b.pk,
      headers: { origin: APP },
      body: { email: `x-${Date.now()}@example.com`, password: 'a long enough password' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED', details: { origin: APP } });
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    // Nothing was registered: the same address signs up fine from the project's own server.
    const email = `y-${Date.now()}@example.com`;
    expect(
      (
        await call('POST', '/register', {
          apiKey: b.pk,
          headers: { origin: EVIL },
          body: { email, password: 'a long enough password' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call('POST', '/register', { apiKey: b.pk, body: { email, password: 'a long enough password' } })).status,
    ).toBe(201);
  });

  it('let tenant tokens through only from the platform-wide origins', async () => {
    const ok = await call('GET', '/auth/api/v1/projects', { token: a.tenantToken, headers: { origin: ADMIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ADMIN);
    const refused = await call('GET', '/auth/api/v1/projects', { token: a.tenantToken, headers: { origin: APP } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ORIGIN_NOT_ALLOWED');
  });

  it('are readable by any allowed origin at the OIDC endpoints a public client calls, and without credentials', async () => {
    for (const path of ['/.well-known/openid-configuration', '/jwks.json']) {
      const res = await fetch(platform.url + path, { headers: { origin: APP } });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    }
    const token = await fetch(`${platform.url}/token`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&client_id=nobody',
    });
    expect(token.status).toBe(401);
    expect(token.headers.get('access-control-allow-origin')).toBe(APP);
    const health = await fetch(`${platform.url}/health`, { headers: { origin: EVIL } });
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('from Tessera’s own origin are no CORS requests', async () => {
    const res = await call('GET', '/auth/api/v1/projects', {
      token: a.tenantToken,
      headers: { origin: new URL(platform.url).origin },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('follow a changed rule at once', async () => {
    const p = await newProjectWithPk(platform.url);
    const origin = 'https://later.example.com';
    expect((await preflight('/v1/find', origin)).status).toBe(403);
    await call('PUT', `/auth/api/v1/projects/${p.id}/cors`, {
      token: p.tenantToken,
      body: { allowed_origins: [origin] },
    });
    expect((await preflight('/v1/find', origin)).status).toBe(204);
    await call('PUT', `/auth/api/v1/projects/${p.id}/cors`, { token: p.tenantToken, body: { allowed_origins: [] } });
    expect((await preflight('/v1/find', origin)).status).toBe(403);
  });

  it('get `*` for a wildcard rule and credentials only for an exact origin that asks for them; realtime never reflects origins', async () => {
    const w = await newProjectWithPk(platform.url);
    expect(
      (
        await call('PUT', `/auth/api/v1/projects/${w.id}/cors`, {
          token: w.tenantToken,
          body: { allowed_origins: ['*'] },
        })
      ).status,
    ).toBe(200);
    const any = await fetch(`${platform.url}/v1/find`, {
      method: 'POST',
      headers: { origin: EVIL, 'x-api-key': w.pk, 'content-type': 'application/json' },
      body: '{"table": "t"}',
    });
    expect(any.headers.get('access-control-allow-origin')).toBe('*');
    expect(any.headers.get('access-control-allow-credentials')).toBeNull();
    const c = await newProjectWithPk(platform.url);
    await call('PUT', `/auth/api/v1/projects/${c.id}/cors`, {
      token: c.tenantToken,
      body: { allowed_origins: ['https://creds.example.com'], allow_credentials: true },
    });
    const creds = await fetch(`${platform.url}/v1/find`, {
      method: 'POST',
      headers: { origin: 'https://creds.example.com', 'x-api-key': c.pk, 'content-type': 'application/json' },
      body: '{"table": "t"}',
    });
    expect(creds.headers.get('access-control-allow-origin')).toBe('https://creds.example.com');
    expect(creds.headers.get('access-control-allow-credentials')).toBe('true');
    const rt = await fetch(
      `${platform.url}/realtime?query=${encodeURIComponent('subscription { dataChanges { table } }')}`,
      {
        headers: { origin: APP, 'x-api-key': a.pk, accept: 'text/event-stream' },
        signal: AbortSignal.timeout(2000),
      },
    );
    expect(rt.headers.get('access-control-allow-origin')).toBe(APP);
    expect(rt.headers.get('access-control-allow-credentials')).toBeNull();
    await rt.body?.cancel();
  });
});

describe('realtime WebSockets', () => {
  // A browser sends Origin on every WebSocket upgrade and CORS does not apply to sockets: without this check a page on
  // any origin could subscribe with a project's publishable key that the project opened to its own origins only.
  const SUB = 'subscription { dataChanges { table } }';
  const connect = async (key: string, headers: Record<string, string>) => {
    const ws = wsClient(platform.url, { 'x-api-key': key }, headers);
    const outcome = await connectOutcome(ws, SUB);
    await ws.dispose();
    return outcome;
  };
  it.each([
    ['a browser on an origin the project allows', () => a.pk, () => ({ origin: APP }), ['connected']],
    ['a browser on an origin nobody allows', () => a.pk, () => ({ origin: EVIL }), ['closed', 4403]],
    ["a browser on another project's origin", () => b.pk, () => ({ origin: APP }), ['closed', 4403]],
    ['a browser on a platform-wide origin', () => b.pk, () => ({ origin: ADMIN }), ['connected']],
    ['a page on Tessera’s own origin', () => b.pk, () => ({ origin: new URL(platform.url).origin }), ['connected']],
    ['a server or app (no Origin)', () => b.pk, () => ({}), ['connected']],
    ['a sandboxed page (Origin: null)', () => a.pk, () => ({ origin: 'null' }), ['closed', 4403]],
  ] as const)('%s', async (_what, key, headers, outcome) => {
    expect(await connect(key(), headers())).toEqual(outcome);
  });

  it('follow a changed rule at once', async () => {
    const p = await newProjectWithPk(platform.url);
    const origin = 'https://later.example.com';
    expect(await connect(p.pk, { origin })).toEqual(['closed', 4403]);
    const rule = (allowed: string[]) =>
      call('PUT', `/auth/api/v1/projects/${p.id}/cors`, { token: p.tenantToken, body: { allowed_origins: allowed } });
    expect((await rule([origin])).status).toBe(200);
    expect(await connect(p.pk, { origin })).toEqual(['connected']);
    expect((await rule([])).status).toBe(200);
    expect(await connect(p.pk, { origin })).toEqual(['closed', 4403]);
  });
});

describe('TESSERA_CORS_ORIGINS', () => {
  it('takes exact origins or *, and never * with credentials', () => {
    expect(loadConfig({ TESSERA_CORS_ORIGINS: 'https://a.example.com, http://localhost:3000' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:3000',
    ]);
    expect(() => loadConfig({ TESSERA_CORS_ORIGINS: 'https://a.example.com/app' })).toThrow(ConfigError);
    expect(() => loadConfig({ TESSERA_CORS_ORIGINS: '*', TESSERA_CORS_ALLOW_CREDENTIALS: 'true' })).toThrow(
      /no credentialed wildcard/,
    );
  });
});
