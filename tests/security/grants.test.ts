// Scopes are granted, never taken: escalation through every grant (password, authorization code, refresh,
// client_credentials) and every consumer of scopes (storage policies, row level security, admin operations),
// the end-user admin API refused to end-users, other projects, anonymous callers and publishable keys, and admin
// operations of client_credentials tokens only with an admin scope the tenant granted to the client.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { client, type Res } from '../support/http.ts';
import {
  DEFAULT_ALLOWED_SCOPES,
  REDIRECT_URI,
  newProject,
  passwordGrant,
  postForm,
  registerUser,
  signInThroughPage,
  startIdentityPlatform,
  type Project,
} from '../e2e/identity/identity-fixtures.ts';
import { STORAGE, download, put } from '../e2e/storage/storage-fixtures.ts';
import { attackTable } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let call: ReturnType<typeof client>;
let a: Project;
let b: Project;
type User = { email: string; password: string; id: string };
let alice: User;
let bob: User;
let carol: User;
let bobToken: string;
let editorsFile: string;
/** client_credentials tokens of project A's client: no admin scope, `admin:sql` only, `admin`. */
const cc: Record<'none' | 'sql' | 'all', string> = { none: '', sql: '', all: '' };

const setClientScopes = async (p: Project, scopes: string[], extra: Record<string, unknown> = {}): Promise<Res> =>
  await call('PUT', `/auth/api/v1/projects/${p.id}/oidc-clients/${p.clientId}`, {
    token: p.tenantToken,
    body: { allowed_scopes: scopes, ...extra },
  });

const clientToken = async (p: Project, scope: string): Promise<Res> =>
  await postForm(
    env.base,
    '/token',
    { grant_type: 'client_credentials', ...(scope ? { scope } : {}) },
    { basic: [p.clientId, p.clientSecret] },
  );

const setRoles = async (user: User, roles: string[]): Promise<void> => {
  const res = await call('PATCH', `/admin/users/${user.id}`, { apiKey: a.apiKey, body: { roles } });
  expect(res.status).toBe(200);
};

/** Where /authorize sent the browser back to, as an answer whose body is the redirect's query. */
const redirectOf = (status: number, location: string | null): Res => {
  const q = location ? Object.fromEntries(new URL(location).searchParams) : {};
  return { status, body: q, headers: new Headers() };
};

const authorizeUrl = (scope: string) =>
  `${env.base}/authorize?${new URLSearchParams({ response_type: 'code', client_id: a.clientId, redirect_uri: REDIRECT_URI, scope, state: 's1' })}`;

/** A GraphQL call answered as `{status, body: {error: {code}}}` (the first error's code). */
const graphql = async (query: string, creds: { apiKey?: string; token?: string }): Promise<Res> => {
  const res = await call('POST', '/graphql', { ...creds, body: { query } });
  return { ...res, body: { error: { code: res.body?.errors?.[0]?.extensions?.code ?? null } } };
};

/** The neighbours: project B's users still sign in, and project A's own rows are as they were. */
const neighbourIntact = async (): Promise<void> => {
  expect((await passwordGrant(env.base, b, carol)).status).toBe(200);
  const rows = await call('POST', '/v1/find', { apiKey: a.apiKey, body: { table: 'editor_notes', select: ['body'] } });
  expect(rows.body.rows).toEqual([{ body: 'editor-only' }]);
};

beforeAll(async () => {
  env = await startIdentityPlatform();
  call = client(env.base);
  a = await newProject(env.base);
  b = await newProject(env.base);
  alice = await registerUser(env.base, a);
  bob = await registerUser(env.base, a);
  carol = await registerUser(env.base, b);
  await setRoles(bob, ['editor']);
  // Row level security reading the token's scopes, as a project would write it.
  await waitFor(
    async () => (await call('POST', '/v1/rawSQL', { apiKey: a.apiKey, body: { sql: 'select 1' } })).status === 200,
    { message: 'project schema' },
  );
  for (const sql of [
    'create table editor_notes (id serial primary key, body text not null)',
    'alter table editor_notes enable row level security',
    "create policy editors on editor_notes using (string_to_array(current_setting('request.scopes', true), ' ') @> array['role:editor'])",
    "insert into editor_notes (body) values ('editor-only')",
  ])
    expect((await call('POST', '/v1/rawSQL', { apiKey: a.apiKey, body: { sql } })).status).toBe(200);
  expect(
    (
      await call('POST', `${STORAGE}/policies`, {
        apiKey: a.apiKey,
        body: { name: 'editors read', folder: 'editors', operations: ['read'], principal: 'role:editor' },
      })
    ).status,
  ).toBe(201);
  editorsFile = (
    await put(
      env.base,
      { id: a.id, apiKey: a.apiKey, tenantToken: a.tenantToken },
      'editors',
      'plan.txt',
      'the editors plan',
    )
  ).body.object.id;
  const login = await passwordGrant(env.base, a, bob, { scope: 'openid role:editor' });
  expect(login.status).toBe(200);
  expect(login.body.scope).toBe('openid role:editor');
  bobToken = login.body.access_token;
  // One client, three tokens: each keeps the scopes it was issued with.
  expect((await setClientScopes(a, [...DEFAULT_ALLOWED_SCOPES, 'admin:sql', 'admin'])).status).toBe(200);
  cc.none = (await clientToken(a, '')).body.access_token;
  cc.sql = (await clientToken(a, 'admin:sql')).body.access_token;
  cc.all = (await clientToken(a, 'admin')).body.access_token;
  expect([cc.none, cc.sql, cc.all].every((t) => typeof t === 'string' && t.length > 0)).toBe(true);
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('scope escalation through every grant', () => {
  attackTable([
    {
      name: 'an end-user asks the password grant for a role the project never assigned',
      attack: () => passwordGrant(env.base, a, alice, { scope: 'openid role:admin' }),
      refused: { status: 400, oauthError: 'invalid_scope', notContaining: () => ['access_token'] },
      intact: neighbourIntact,
    },
    {
      name: 'an end-user asks the password grant for an admin scope',
      attack: () => passwordGrant(env.base, a, alice, { scope: 'openid admin:sql' }),
      refused: { status: 400, oauthError: 'invalid_scope', notContaining: () => ['access_token'] },
    },
    {
      name: 'an end-user asks the password grant for an API scope the client may not issue',
      attack: () => passwordGrant(env.base, a, alice, { scope: 'openid orders:write' }),
      refused: { status: 400, oauthError: 'invalid_scope' },
    },
    {
      name: 'an authorization request asks for an admin scope: sent back with invalid_scope before any sign-in',
      attack: async () => {
        const res = await fetch(authorizeUrl('openid admin'), { redirect: 'manual' });
        return redirectOf(res.status, res.headers.get('location'));
      },
      refused: { status: 302, oauthError: 'invalid_scope' },
    },
    {
      name: 'an authorization request asks for a role the user does not hold: the signed-in user is sent back with invalid_scope, no code',
      attack: async () => {
        const page = await signInThroughPage(authorizeUrl('openid role:admin'), alice);
        return redirectOf(page.status, page.location);
      },
      refused: { status: 302, oauthError: 'invalid_scope', notContaining: () => ['"code"'] },
    },
    {
      name: 'a refresh asks for a role the session was never granted',
      attack: async () => {
        const login = await passwordGrant(env.base, a, alice, { scope: 'openid offline_access' });
        return await postForm(
          env.base,
          '/token',
          { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, scope: 'openid role:admin' },
          { basic: [a.clientId, a.clientSecret] },
        );
      },
      refused: { status: 400, oauthError: 'invalid_scope' },
    },
    {
      name: 'client_credentials asks for a role scope (no user holds it)',
      attack: () => clientToken(a, 'role:editor'),
      refused: { status: 400, oauthError: 'invalid_scope' },
    },
    {
      name: 'client_credentials asks for an admin scope its client was not granted',
      attack: () => clientToken(b, 'admin'),
      refused: { status: 400, oauthError: 'invalid_scope', notContaining: () => ['access_token'] },
      intact: neighbourIntact,
    },
    {
      name: 'client_credentials asks for an API scope its client may not issue',
      attack: () => clientToken(b, 'orders:read'),
      refused: { status: 400, oauthError: 'invalid_scope' },
    },
    {
      name: 'a tenant grants admin scopes to a public client (browser code could then hold them)',
      attack: () => setClientScopes(b, [...DEFAULT_ALLOWED_SCOPES, 'admin'], { public: true }),
      refused: { status: 400, code: 'VALIDATION_FAILED' },
    },
    {
      name: 'a tenant grants an admin scope that does not exist (a typo would open nothing, silently)',
      attack: () => setClientScopes(b, ['admin:everything']),
      refused: { status: 400, code: 'VALIDATION_FAILED' },
    },
  ]);

  it('narrows a refreshed token to the roles the user still holds', async () => {
    const login = await passwordGrant(env.base, a, bob, { scope: 'openid offline_access role:editor' });
    expect(login.body.scope).toBe('openid offline_access role:editor');
    await setRoles(bob, []);
    try {
      const refreshed = await postForm(
        env.base,
        '/token',
        { grant_type: 'refresh_token', refresh_token: login.body.refresh_token },
        { basic: [a.clientId, a.clientSecret] },
      );
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.scope).toBe('openid offline_access');
    } finally {
      await setRoles(bob, ['editor']);
    }
  });
});

describe('every consumer of scopes', () => {
  attackTable([
    {
      name: 'an end-user without the role downloads a file only role:editor may read',
      attack: async () => {
        const t = await passwordGrant(env.base, a, alice, { scope: 'openid' });
        const d = await download(env.base, editorsFile, { token: t.body.access_token });
        return { status: d.status, body: d.json ?? d.bytes.toString('utf8'), headers: d.headers };
      },
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['the editors plan'] },
    },
    {
      name: 'a token issued with role:editor keeps downloading after the project takes the role away',
      attack: async () => {
        expect((await download(env.base, editorsFile, { token: bobToken })).status).toBe(200);
        await setRoles(bob, []);
        const d = await download(env.base, editorsFile, { token: bobToken });
        return { status: d.status, body: d.json ?? d.bytes.toString('utf8'), headers: d.headers };
      },
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['the editors plan'] },
      intact: async () => {
        await setRoles(bob, ['editor']);
        expect((await download(env.base, editorsFile, { token: bobToken })).status).toBe(200);
      },
    },
    {
      name: 'row level security reading request.scopes: an end-user without the role sees none of the rows',
      attack: async () => {
        const t = await passwordGrant(env.base, a, alice, { scope: 'openid' });
        return await call('POST', '/v1/find', {
          token: t.body.access_token,
          body: { table: 'editor_notes', select: ['body'] },
        });
      },
      refused: { status: 200, notContaining: () => ['editor-only'] },
      intact: neighbourIntact,
    },
    {
      name: 'row level security: a role:editor token reads none of the rows once the role is taken away',
      attack: async () => {
        const before = await call('POST', '/v1/find', {
          token: bobToken,
          body: { table: 'editor_notes', select: ['body'] },
        });
        expect(before.body.rows).toEqual([{ body: 'editor-only' }]);
        await setRoles(bob, []);
        return await call('POST', '/v1/find', { token: bobToken, body: { table: 'editor_notes', select: ['body'] } });
      },
      refused: { status: 200, notContaining: () => ['editor-only'] },
      intact: async () => {
        await setRoles(bob, ['editor']);
        await neighbourIntact();
      },
    },
    {
      name: 'introspection of a role:editor token no longer shows the role once it is taken away',
      attack: async () => {
        await setRoles(bob, []);
        const res = await postForm(
          env.base,
          '/introspect',
          { token: bobToken },
          { basic: [a.clientId, a.clientSecret] },
        );
        return { ...res, status: res.body.active === true ? 200 : 500 };
      },
      refused: { status: 200, notContaining: () => ['role:editor'] },
      intact: () => setRoles(bob, ['editor']),
    },
  ]);
});

describe('admin operations of client_credentials tokens', () => {
  const none = () => ({ token: cc.none });
  attackTable([
    {
      name: 'a client_credentials token without an admin scope runs rawSQL (any OIDC client secret would be a full admin key)',
      attack: () => call('POST', '/v1/rawSQL', { ...none(), body: { sql: 'select current_user' } }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: neighbourIntact,
    },
    {
      name: 'the same token hides rawSQL inside a transaction',
      attack: () =>
        call('POST', '/v1/transaction', {
          ...none(),
          body: {
            operations: [
              { action: 'find', table: 'editor_notes' },
              { action: 'rawSQL', sql: 'drop table editor_notes' },
            ],
          },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: neighbourIntact,
    },
    {
      name: 'the same token creates an edge function',
      attack: () =>
        call('POST', '/edge/api/v1/functions', {
          ...none(),
          body: { name: 'evil', steps: [{ name: 'a', kind: 'Transform', expression: { ok: true } }] },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'the same token lists executions (their inputs and outputs)',
      attack: () => call('GET', '/edge/api/v1/executions', none()),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'the same token sets a function secret',
      attack: () =>
        call('POST', '/edge/api/v1/secrets', { ...none(), body: { name: 'STRIPE_KEY', value: 'overwritten' } }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'the same token reads the e-mail configuration',
      attack: () => call('GET', '/edge/api/v1/email-config', none()),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'the same token opens storage with a public policy',
      attack: () =>
        call('POST', `${STORAGE}/policies`, {
          ...none(),
          body: { name: 'open', folder: '', operations: ['read', 'list'], principal: 'public' },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () => {
        const d = await download(env.base, editorsFile);
        expect(d.status).toBe(401);
      },
    },
    {
      name: 'the same token adds a database hook',
      attack: () =>
        call('POST', '/edge/api/v1/hooks', {
          ...none(),
          body: { table: 'editor_notes', timing: 'before', events: ['insert'], function: 'nope' },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'the same token lists end-users through the admin API',
      attack: () => call('GET', '/admin/users', none()),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => [alice.email] },
    },
    {
      name: 'the same token reaches the admin API through GraphQL',
      attack: () => graphql('{ projectEndUsers { items { email } } }', none()),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => [alice.email] },
    },
    {
      name: 'the same token runs rawSQL through GraphQL, aliased inside a fragment',
      attack: () =>
        graphql('mutation { ...F } fragment F on Mutation { x: dataRawSql(sql: "select 1") { rowCount } }', none()),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'a token granted only admin:sql creates an edge function',
      attack: async () => {
        expect((await call('POST', '/v1/rawSQL', { token: cc.sql, body: { sql: 'select 1 as one' } })).status).toBe(
          200,
        );
        return await call('POST', '/edge/api/v1/functions', {
          token: cc.sql,
          body: { name: 'evil', steps: [{ name: 'a', kind: 'Transform', expression: { ok: true } }] },
        });
      },
      refused: { status: 403, code: 'FORBIDDEN' },
    },
  ]);

  it('lets a token granted `admin` do every admin operation, and leaves ordinary operations to every client token', async () => {
    const all = { token: cc.all };
    expect((await call('POST', '/v1/rawSQL', { ...all, body: { sql: 'select 1 as one' } })).status).toBe(200);
    expect(
      (
        await call('POST', '/edge/api/v1/functions', {
          ...all,
          body: { name: 'granted', steps: [{ name: 'a', kind: 'Transform', expression: { ok: true } }] },
        })
      ).status,
    ).toBe(201);
    expect((await call('GET', '/admin/users', all)).status).toBe(200);
    expect((await call('GET', `${STORAGE}/policies`, all)).status).toBe(200);
    // Not admin: the data API's actions and invoking a function.
    expect((await call('POST', '/v1/find', { token: cc.none, body: { table: 'editor_notes' } })).status).toBe(200);
    expect((await call('POST', '/edge/api/v1/invoke/granted', { token: cc.none, body: {} })).status).toBe(200);
  });
});

describe('the end-user admin API', () => {
  attackTable([
    {
      name: "an end-user token lists the project's users",
      attack: async () => call('GET', '/admin/users', { token: bobToken }),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => [alice.email] },
    },
    {
      name: 'an end-user gives themselves a role through the admin API',
      attack: async () =>
        call('PATCH', `/admin/users/${bob.id}`, { token: bobToken, body: { roles: ['editor', 'admin'] } }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () =>
        expect((await call('GET', `/admin/users/${bob.id}`, { apiKey: a.apiKey })).body.user.roles).toEqual(['editor']),
    },
    {
      name: 'an end-user runs rawSQL inside a transaction',
      attack: async () =>
        call('POST', '/v1/transaction', {
          token: bobToken,
          body: { operations: [{ action: 'rawSQL', sql: 'select 1' }] },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: "another project's API key reads, disables and deletes this project's user",
      attack: async () => {
        expect((await call('POST', `/admin/users/${alice.id}/disable`, { apiKey: b.apiKey })).status).toBe(404);
        expect((await call('DELETE', `/admin/users/${alice.id}`, { apiKey: b.apiKey })).status).toBe(404);
        return await call('GET', `/admin/users/${alice.id}`, { apiKey: b.apiKey });
      },
      refused: { status: 404, code: 'NOT_FOUND', notContaining: () => [alice.email] },
      intact: async () => expect((await passwordGrant(env.base, a, alice)).status).toBe(200),
    },
    {
      name: "another project's API key lists users: only its own",
      attack: async () => call('GET', `/admin/users?search=${encodeURIComponent(alice.email)}`, { apiKey: b.apiKey }),
      refused: { status: 200, notContaining: () => [alice.email, alice.id] },
    },
    {
      name: 'an anonymous caller lists users',
      attack: async () => call('GET', '/admin/users'),
      refused: { status: 401, code: 'UNAUTHENTICATED' },
    },
    {
      name: "the project's tenant token calls the admin API (it is the project key's)",
      attack: async () => call('GET', '/admin/users', { token: a.tenantToken }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: "the project's publishable key (the one shipped in web pages) lists end-users",
      attack: async () => call('GET', '/admin/users', { apiKey: await publishableKeyOf(a) }),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => [alice.email] },
    },
    {
      name: 'the publishable key disables a user',
      attack: async () => call('POST', `/admin/users/${alice.id}/disable`, { apiKey: await publishableKeyOf(a) }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () => expect((await passwordGrant(env.base, a, alice)).status).toBe(200),
    },
    {
      name: 'the publishable key runs rawSQL, alone and inside a transaction',
      attack: async () => {
        const key = await publishableKeyOf(a);
        expect((await call('POST', '/v1/rawSQL', { apiKey: key, body: { sql: 'select 1' } })).status).toBe(403);
        return await call('POST', '/v1/transaction', {
          apiKey: key,
          body: { operations: [{ action: 'rawSQL', sql: 'drop table editor_notes' }] },
        });
      },
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: neighbourIntact,
    },
    {
      name: 'the publishable key creates a storage policy or sets a function secret',
      attack: async () => {
        const key = await publishableKeyOf(a);
        expect(
          (await call('POST', '/edge/api/v1/secrets', { apiKey: key, body: { name: 'X', value: 'y' } })).status,
        ).toBe(403);
        return await call('POST', `${STORAGE}/policies`, {
          apiKey: key,
          body: { name: 'open', folder: '', operations: ['read'], principal: 'public' },
        });
      },
      refused: { status: 403, code: 'FORBIDDEN' },
    },
  ]);
});

/** The project's publishable key (`tpk_...`), as the tenant reads it. */
async function publishableKeyOf(p: Project): Promise<string> {
  const res = await call('GET', `/auth/api/v1/projects/${p.id}`, { token: p.tenantToken });
  expect(res.body.project.publishable_key).toMatch(/^tpk_/);
  return res.body.project.publishable_key as string;
}
