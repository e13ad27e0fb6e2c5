// The per-project request log (issue 26): what the front door records for each kind of credential, the filters and
// cursor pages of GET /auth/api/v1/projects/:id/requests, its walls (another tenant, the project's own keys, an
// end-user, an anonymous caller), that it keeps only the newest TESSERA_REQUEST_LOG_ROWS rows of a project, and that
// no body, key or token ever reaches the table.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';

const KEEP = 40;
const PASSWORD = 'a long tenant password';
const USER_PASSWORD = 'end-user secret passphrase 77';

type Logged = {
  at: string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  credential: string;
};

let p: TestPlatform;
let call: ReturnType<typeof client>;
let db: pg.Client;
const owner = { token: '', refresh: '' };
let otherToken = '';
let projectId = '';
let otherProjectId = '';
let apiKey = '';
let publishableKey = '';
let userToken = '';

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

async function tenant(email: string): Promise<{ token: string; refresh: string }> {
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: PASSWORD } });
  return { token: login.body.access_token as string, refresh: login.body.refresh_token as string };
}

const logOf = async (query = '', token = owner.token, id = projectId) =>
  await call('GET', `/auth/api/v1/projects/${id}/requests${query}`, { token });

/** Waits until the log holds a row with this request id (rows are written about a second after the request). */
async function logged(requestId: string): Promise<Logged> {
  return await waitFor(
    async () => ((await logOf('?first=200')).body.requests as Logged[]).find((r) => r.request_id === requestId),
    { message: `request ${requestId} in the log` },
  );
}

beforeAll(async () => {
  p = await startOneProcess({ TESSERA_REQUEST_LOG_ROWS: String(KEEP) });
  call = client(p.url);
  db = new pg.Client({ connectionString: p.tessera!.config.databaseUrl });
  await db.connect();
  Object.assign(owner, await tenant(`log-owner-${Date.now()}@example.com`));
  otherToken = (await tenant(`log-other-${Date.now()}@example.com`)).token;
  const created = await call('POST', '/auth/api/v1/projects', { token: owner.token, body: { name: 'Logged' } });
  projectId = created.body.project.id;
  apiKey = created.body.project.api_key;
  publishableKey = created.body.project.publishable_key;
  otherProjectId = (await call('POST', '/auth/api/v1/projects', { token: otherToken, body: { name: 'Theirs' } })).body
    .project.id;
  // An end-user of the project, signed in with the password grant of the default client.
  const email = `user-${Date.now()}@example.com`;
  expect(
    (await call('POST', '/register', { apiKey: publishableKey, body: { email, password: USER_PASSWORD } })).status,
  ).toBe(201);
  const clients = await call('GET', `/auth/api/v1/projects/${projectId}/oidc-clients`, { token: owner.token });
  const c = clients.body.oidc_clients[0] as { client_id: string; client_secret: string };
  const form = new URLSearchParams({
    grant_type: 'password',
    username: email,
    password: USER_PASSWORD,
    client_id: c.client_id,
    client_secret: c.client_secret,
    scope: 'openid',
  });
  const tokenRes = await fetch(`${p.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  userToken = ((await tokenRes.json()) as { access_token: string }).access_token;
  expect(typeof userToken).toBe('string');
}, 60_000);

afterAll(async () => {
  await db?.end();
  await p?.close();
});

describe('the request log records every kind of credential', () => {
  it('has a row for a secret key, a publishable key, an end-user token, a tenant token and an anonymous caller', async () => {
    const made = {
      secret_key: await call('GET', '/storage/api/v1/storage/policies', { apiKey }),
      publishable_key: await call('POST', '/register', { apiKey: publishableKey, body: { email: 'bad' } }),
      user_token: await call('POST', '/mfa/enroll', { token: userToken }),
      tenant_token: await call('GET', `/auth/api/v1/projects/${projectId}`, { token: owner.token }),
      anonymous: await call('POST', `/webhooks/${projectId}/no-such-receiver`, { body: { hello: 1 } }),
    };
    for (const [credential, res] of Object.entries(made)) {
      const row = await logged(res.headers.get('x-request-id')!);
      expect({ credential: row.credential, status: row.status }).toEqual({ credential, status: res.status });
      expect(row.route.startsWith('/')).toBe(true);
      expect(row.duration_ms).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(row.at))).toBe(false);
    }
    const anon = await logged(made.anonymous.headers.get('x-request-id')!);
    expect({ method: anon.method, route: anon.route, status: anon.status }).toEqual({
      method: 'POST',
      route: '/webhooks/:project_id/:slug',
      status: 404,
    });
  });

  it('keeps the route template, never the raw path or its query string', async () => {
    const res = await call('GET', `/auth/api/v1/projects/${projectId}/oidc-clients?marker=query-string-value`, {
      token: owner.token,
    });
    const row = await logged(res.headers.get('x-request-id')!);
    expect(row.route).toBe('/auth/api/v1/projects/:id/oidc-clients');
  });

  it("does not log another tenant's failed probe of the project, nor the log's own reads", async () => {
    const probe = await call('GET', `/auth/api/v1/projects/${projectId}`, { token: otherToken });
    expectError(probe, 404, 'NOT_FOUND');
    const read = await logOf();
    const marker = await call('GET', `/auth/api/v1/projects/${projectId}`, { token: owner.token });
    await logged(marker.headers.get('x-request-id')!); // written after the probe and the read
    const ids = ((await logOf('?first=200')).body.requests as Logged[]).map((r) => r.request_id);
    expect(ids).not.toContain(probe.headers.get('x-request-id'));
    expect(ids).not.toContain(read.headers.get('x-request-id'));
  });

  it('never stores a body, a key or a token', async () => {
    const marker = await call('POST', '/register', {
      apiKey: publishableKey,
      body: { email: `body-marker-${Date.now()}@example.com`, password: 'body-marker-password-1234' },
    });
    await logged(marker.headers.get('x-request-id')!);
    const { rows } = await db.query('select * from request_log');
    expect(rows.length).toBeGreaterThan(5);
    const stored = JSON.stringify(rows);
    for (const secret of [
      apiKey,
      publishableKey,
      userToken,
      owner.token,
      owner.refresh,
      USER_PASSWORD,
      'body-marker',
      'query-string-value',
      'tsk_',
      'tpk_',
      'eyJ',
    ])
      expect({ secret, found: stored.includes(secret) }).toEqual({ secret, found: false });
    expect(Object.keys(rows[0]).sort()).toEqual(
      ['at', 'credential', 'duration_ms', 'id', 'method', 'project_id', 'request_id', 'route', 'status'].sort(),
    );
  });
});

describe('filters and pages', () => {
  it('filters by status class, route text and credential kind', async () => {
    const four = (await logOf('?status=4xx&first=200')).body.requests as Logged[];
    expect(four.length).toBeGreaterThan(0);
    expect(four.every((r) => r.status >= 400 && r.status < 500)).toBe(true);
    const two = (await logOf('?status=2xx&first=200')).body.requests as Logged[];
    expect(two.length).toBeGreaterThan(0);
    expect(two.every((r) => r.status >= 200 && r.status < 300)).toBe(true);
    const hooks = (await logOf('?route=WEBHOOKS')).body.requests as Logged[];
    expect(hooks.length).toBeGreaterThan(0);
    expect(hooks.every((r) => r.route === '/webhooks/:project_id/:slug')).toBe(true);
    // A LIKE wildcard in the text is taken literally.
    expect((await logOf('?route=%25')).body.requests).toEqual([]);
    const anon = (await logOf('?credential=anonymous')).body.requests as Logged[];
    expect(anon.length).toBeGreaterThan(0);
    expect(anon.every((r) => r.credential === 'anonymous')).toBe(true);
    const both = (await logOf('?credential=tenant_token&status=2xx&route=oidc')).body.requests as Logged[];
    expect(both.length).toBeGreaterThan(0);
    expect(both.every((r) => r.credential === 'tenant_token' && r.route.includes('oidc'))).toBe(true);
  });

  it('pages newest first with a cursor, without overlap', async () => {
    const all = (await logOf('?first=200')).body.requests as Logged[];
    expect(all.length).toBeGreaterThan(4);
    for (let i = 1; i < all.length; i++) expect(all[i - 1]!.at >= all[i]!.at).toBe(true);
    const first = await logOf('?first=2');
    expect(first.body.requests).toHaveLength(2);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await logOf(`?first=2&after=${encodeURIComponent(first.body.next_cursor)}`);
    const ids = [...first.body.requests, ...second.body.requests].map((r: Logged) => r.request_id);
    expect(ids).toEqual(all.slice(0, 4).map((r) => r.request_id));
  });

  it.each([
    ['?status=2XX', 'status'],
    ['?status=200', 'status'],
    ['?credential=password', 'credential'],
    [`?route=${'x'.repeat(201)}`, 'route'],
    ['?first=0', 'first'],
    ['?first=201', 'first'],
    ['?after=not-a-cursor', 'after'],
  ])('%s is a 400 naming %s', async (query, field) => {
    const res = await logOf(query);
    expectError(res, 400, 'VALIDATION_FAILED', new RegExp(field));
  });
});

describe('who may read it', () => {
  it("another tenant gets NOT_FOUND for the project, and the owner NOT_FOUND for another tenant's", async () => {
    expectError(await logOf('', otherToken), 404, 'NOT_FOUND');
    expectError(await logOf('', owner.token, otherProjectId), 404, 'NOT_FOUND');
    expectError(await logOf('', owner.token, '00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await logOf('', owner.token, 'not-a-uuid'), 404, 'NOT_FOUND');
  });

  it("the project's own keys and its end-users are refused; an anonymous caller must sign in", async () => {
    const path = `/auth/api/v1/projects/${projectId}/requests`;
    expectError(await call('GET', path, { apiKey }), 403, 'FORBIDDEN');
    expectError(await call('GET', path, { apiKey: publishableKey }), 403, 'FORBIDDEN');
    expectError(await call('GET', path, { token: userToken }), 403, 'FORBIDDEN');
    expectError(await call('GET', path), 401, 'UNAUTHENTICATED');
  });

  it('GraphQL refuses a project key too', async () => {
    const res = await call('POST', '/graphql', {
      apiKey,
      body: { query: `{ projectRequests(projectId: "${projectId}") { items { route } } }` },
    });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(res.body.data ?? null).toBeNull();
  });
});

describe('bounded per project', () => {
  it(`keeps the newest ${KEEP} rows of a project and prunes the rest`, async () => {
    let last: Res | undefined;
    for (let i = 0; i < KEEP + 15; i++)
      last = await call('GET', `/auth/api/v1/projects/${projectId}`, { token: owner.token });
    await logged(last!.headers.get('x-request-id')!);
    const count = async () =>
      Number(
        (await db.query('select count(*)::int as n from request_log where project_id = $1', [projectId])).rows[0].n,
      );
    await waitFor(async () => ((await count()) === KEEP ? true : undefined), {
      message: `the log pruned to ${KEEP} rows`,
    });
    const rows = (await logOf('?first=200')).body.requests as Logged[];
    expect(rows).toHaveLength(KEEP);
    expect(rows[0]!.request_id).toBe(last!.headers.get('x-request-id'));
    // The other tenant's project is its own: its rows are not counted against this one.
    const theirs = await call('GET', `/auth/api/v1/projects/${otherProjectId}`, { token: otherToken });
    const row = await waitFor(
      async () =>
        ((await logOf('', otherToken, otherProjectId)).body.requests as Logged[]).find(
          (r) => r.request_id === theirs.headers.get('x-request-id'),
        ),
      { message: "the other tenant's request in its own log" },
    );
    expect(row.credential).toBe('tenant_token');
    expect(((await logOf('?first=200')).body.requests as Logged[]).map((r) => r.request_id)).not.toContain(
      theirs.headers.get('x-request-id'),
    );
  });

  it("a deleted project's rows go with it", async () => {
    const gone = (await call('POST', '/auth/api/v1/projects', { token: owner.token, body: { name: 'Short-lived' } }))
      .body.project;
    const res = await call('GET', '/storage/api/v1/storage/policies', { apiKey: gone.api_key });
    await waitFor(
      async () =>
        ((await logOf('', owner.token, gone.id)).body.requests as Logged[]).some(
          (r) => r.request_id === res.headers.get('x-request-id'),
        ) || undefined,
      { message: 'the request in the log' },
    );
    expect((await call('DELETE', `/auth/api/v1/projects/${gone.id}`, { token: owner.token })).status).toBe(204);
    const left = await db.query('select count(*)::int as n from request_log where project_id = $1', [gone.id]);
    expect(left.rows[0].n).toBe(0);
  });
});
