// Attack table of the operator credential (issue 28): an operator key opens the admin API and nothing else; the admin
// API (and the usage totals it shows per account) refuses every other credential; guessing operator keys is rate limited per client address; and a project the
// operator suspended refuses every kind of caller — each with the neighbour (the other project, the admin API) intact.
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import {
  newProjectWithPk,
  passwordGrant,
  postForm,
  registerUser,
  REDIRECT_URI,
  type Project,
} from '../e2e/identity/identity-fixtures.ts';
import { attackTable } from './attack-table.ts';
import { OPERATOR_KEY_FAILURES_PER_ADDRESS } from '../../rest-compat/server.ts';

const OPERATOR_KEY = `top_${'s'.repeat(43)}`;

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let a: Project & { pk: string };
let b: Project & { pk: string };
let userToken: string;
let clientToken: string;
let suspendedUserToken: string;
let suspendedClientToken: string;

const asOperator = (method: string, path: string, body?: unknown) =>
  call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });
const gql = (opts: { token?: string; apiKey?: string }, query: string) =>
  call('POST', '/graphql', { ...opts, body: { query } });
/** A GraphQL refusal as a REST-shaped answer for the table. */
const asRest = (res: Res): Res => {
  const e = res.body?.errors?.[0]?.extensions;
  return { status: e?.http?.status ?? res.status, body: { error: { code: e?.code } }, headers: res.headers };
};
const clientCredentials = async (p: Project) =>
  (
    await postForm(platform.url, '/token', {
      grant_type: 'client_credentials',
      client_id: p.clientId,
      client_secret: p.clientSecret,
    })
  ).body.access_token as string;
const bIntact = async () => {
  const res = await call('POST', '/v1/find', { apiKey: b.apiKey, body: { table: 'notes' } });
  expect(res.status).toBe(200);
  expect(res.body.rows).toEqual([{ id: 1, body: 'neighbour' }]);
};
/** The id of the account owning a project (its tenant token says). */
const tenantIdOf = async (p: Project) =>
  (await call('GET', '/auth/api/v1/tenant', { token: p.tenantToken })).body.tenant.id as string;
const adminIntact = async () => {
  expect((await asOperator('GET', '/plans')).status).toBe(200);
};

beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_OPERATOR_KEY: OPERATOR_KEY });
  call = client(platform.url);
  a = await newProjectWithPk(platform.url);
  b = await newProjectWithPk(platform.url);
  for (const p of [a, b]) {
    await call('POST', '/v1/rawSQL', {
      apiKey: p.apiKey,
      body: { sql: 'create table notes (id serial primary key, body text)' },
    });
  }
  await call('POST', '/v1/insert', { apiKey: b.apiKey, body: { table: 'notes', values: { body: 'neighbour' } } });
  const user = await registerUser(platform.url, a);
  userToken = (await passwordGrant(platform.url, a, user)).body.access_token;
  clientToken = await clientCredentials(a);
  // Project b's own end-user and client tokens, issued before it is suspended.
  const bUser = await registerUser(platform.url, b);
  suspendedUserToken = (await passwordGrant(platform.url, b, bUser)).body.access_token;
  suspendedClientToken = await clientCredentials(b);
}, 120_000);
afterAll(async () => {
  await platform?.close();
});

describe('an operator key opens the admin API and nothing else', () => {
  attackTable([
    {
      name: 'an operator key on a tenant route is refused',
      attack: () => call('GET', '/auth/api/v1/projects', { token: OPERATOR_KEY }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: adminIntact,
    },
    {
      name: "an operator key on the data API is refused (it is no project's key)",
      attack: () => call('POST', '/v1/find', { token: OPERATOR_KEY, body: { table: 'notes' } }),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['neighbour'] },
      intact: bIntact,
    },
    {
      name: 'an operator key on storage is refused',
      attack: () => call('GET', '/storage/api/v1/storage/objects', { token: OPERATOR_KEY }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an operator key on edge functions is refused',
      attack: () => call('GET', '/edge/api/v1/functions', { token: OPERATOR_KEY }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: "an operator key on the identity provider's end-user admin API is refused",
      attack: () => call('GET', '/admin/users', { token: OPERATOR_KEY }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: "an operator key reading a project's secrets through /graphql is refused before anything runs",
      attack: async () => asRest(await gql({ token: OPERATOR_KEY }, `{ project(id: "${b.id}") { apiKey } }`)),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => [b.apiKey] },
      intact: bIntact,
    },
    {
      name: 'an operator key mixing an admin field with a tenant field in one /graphql operation is refused whole',
      attack: async () => asRest(await gql({ token: OPERATOR_KEY }, '{ adminPlans { id } me { email } }')),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an operator key sent as X-Api-Key is no project key',
      attack: () => call('POST', '/v1/find', { apiKey: OPERATOR_KEY, body: { table: 'notes' } }),
      refused: { status: 401, code: 'INVALID_API_KEY' },
      intact: bIntact,
    },
  ]);
});

describe('the admin API refuses everyone but the operator', () => {
  attackTable([
    {
      name: 'an anonymous caller lists the accounts',
      attack: () => call('GET', '/admin/api/v1/tenants'),
      refused: { status: 401, code: 'UNAUTHENTICATED' },
    },
    {
      name: "a tenant raises its own plan's limits",
      attack: () =>
        call('PATCH', '/admin/api/v1/plans/free', { token: a.tenantToken, body: { limits: { max_projects: null } } }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () =>
        expect(
          (await asOperator('GET', '/plans')).body.plans.find((p: { id: string }) => p.id === 'free').limits
            .max_projects,
        ).toBe(3),
    },
    {
      name: "a project's secret key suspends its neighbour",
      attack: () => call('POST', `/admin/api/v1/projects/${b.id}/suspend`, { apiKey: a.apiKey, body: {} }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: bIntact,
    },
    {
      name: 'a publishable key lists every project',
      attack: () => call('GET', '/admin/api/v1/projects', { apiKey: a.pk }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an end-user token creates an operator key',
      attack: () => call('POST', '/admin/api/v1/operator-keys', { token: userToken, body: { name: 'mine' } }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () => expect((await asOperator('GET', '/operator-keys')).body.operator_keys).toEqual([]),
    },
    {
      name: 'a client_credentials token (even one granted admin) moves its tenant to another plan',
      attack: () =>
        call('PUT', `/admin/api/v1/tenants/${b.id}/plan`, { token: clientToken, body: { plan_id: 'enterprise' } }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'a tenant runs an operator field through /graphql',
      attack: async () => asRest(await gql({ token: a.tenantToken }, '{ operatorKeys { id name } }')),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an anonymous caller runs an operator mutation through /graphql',
      attack: async () => asRest(await gql({}, 'mutation { createOperatorKey(input: {name: "x"}) { key } }')),
      refused: { status: 401, code: 'UNAUTHENTICATED' },
      intact: async () => expect((await asOperator('GET', '/operator-keys')).body.operator_keys).toEqual([]),
    },
    // The project servers (issue 29): where every project's database lives, and the URLs that reach them.
    {
      name: 'an anonymous caller lists the project servers',
      attack: () => call('GET', '/admin/api/v1/servers'),
      refused: { status: 401, code: 'UNAUTHENTICATED' },
    },
    {
      name: 'a tenant registers a project server of its own',
      attack: () =>
        call('POST', '/admin/api/v1/servers', {
          token: a.tenantToken,
          body: { id: 'mine', url: 'postgres://me:pw@127.0.0.1:5432/postgres' },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () =>
        expect((await asOperator('GET', '/servers')).body.servers.map((s: { id: string }) => s.id)).toEqual([
          'default',
        ]),
    },
    {
      name: "a project's secret key marks the default server read-only",
      attack: () => call('PATCH', '/admin/api/v1/servers/default', { apiKey: a.apiKey, body: { state: 'read-only' } }),
      refused: { status: 403, code: 'FORBIDDEN' },
      intact: async () => expect((await asOperator('GET', '/servers/default')).body.state).toBe('active'),
    },
    {
      name: 'an end-user token removes a project server',
      attack: () => call('DELETE', '/admin/api/v1/servers/default', { token: userToken }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'a client_credentials token (granted admin) reads a project server',
      attack: () => call('GET', '/admin/api/v1/servers/default', { token: clientToken }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'a tenant lists the project servers through /graphql',
      attack: async () => asRest(await gql({ token: a.tenantToken }, '{ adminServers { id url } }')),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'a tenant reads which server its project lives on through /graphql',
      attack: async () =>
        asRest(await gql({ token: a.tenantToken }, `{ project(id: "${a.id}") { id databaseServer } }`)),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['"default"'] },
      intact: bIntact,
    },
    // An account's usage totals (summed over its projects by storage, data and functions): the operator's alone.
    {
      name: "a tenant reads its own account's usage totals through the admin API",
      attack: async () => call('GET', `/admin/api/v1/tenants/${await tenantIdOf(a)}`, { token: a.tenantToken }),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['storage_usage', 'database_usage'] },
      intact: async () => {
        const row = (await asOperator('GET', `/tenants/${await tenantIdOf(b)}`)).body;
        expect(row).toMatchObject({ project_count: 1, database_usage: { unmeasured: 0 } });
        expect(row.database_usage.bytes).toBeGreaterThan(0);
      },
    },
    {
      name: "a project's secret key reads its account's usage totals through /graphql",
      attack: async () =>
        asRest(
          await gql(
            { apiKey: a.apiKey },
            '{ adminTenants { items { id storageUsage { bytes } databaseUsage { rows } functionUsage { runsThisMonth } } } }',
          ),
        ),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['storageUsage', 'databaseUsage'] },
    },
    {
      name: "an anonymous caller reads an account's usage totals",
      attack: async () => call('GET', `/admin/api/v1/tenants/${await tenantIdOf(b)}`),
      refused: { status: 401, code: 'UNAUTHENTICATED', notContaining: () => ['storage_usage'] },
    },
    {
      name: "a tenant hands its neighbour's project ids to the totals itself (_entities) through /graphql",
      attack: async () =>
        asRest(
          await gql(
            { token: a.tenantToken },
            `{ _entities(representations: [{ __typename: "OperatorTenant", id: "${b.id}", projectIds: ["${b.id}"] }]) {
                ... on OperatorTenant { storageUsage { bytes } databaseUsage { rows } } } }`,
          ),
        ),
      refused: { status: 400, code: 'GRAPHQL_VALIDATION_FAILED', notContaining: () => ['"rows"'] },
      intact: bIntact,
    },
    {
      name: 'a forged operator key is refused',
      attack: () => call('GET', '/admin/api/v1/plans', { token: `top_${'x'.repeat(43)}` }),
      refused: { status: 401, code: 'INVALID_TOKEN' },
      intact: adminIntact,
    },
  ]);
});

describe('a suspended project refuses every kind of caller', () => {
  beforeAll(async () => {
    const res = await asOperator('POST', `/projects/${b.id}/suspend`, { reason: 'attack table' });
    expect(res.status).toBe(200);
  });
  attackTable([
    {
      name: 'its secret key reads its data',
      attack: () => call('POST', '/v1/find', { apiKey: b.apiKey, body: { table: 'notes' } }),
      refused: { status: 403, code: 'PROJECT_SUSPENDED', notContaining: () => ['neighbour'] },
    },
    {
      name: 'its publishable key reads its data',
      attack: () => call('POST', '/v1/find', { apiKey: b.pk, body: { table: 'notes' } }),
      refused: { status: 403, code: 'PROJECT_SUSPENDED' },
    },
    {
      name: 'an end-user token issued before the suspension reads its profile',
      attack: () => call('GET', '/userinfo', { token: suspendedUserToken }),
      refused: { status: 403, code: 'PROJECT_SUSPENDED' },
    },
    {
      name: 'a client_credentials token issued before the suspension lists files',
      attack: () => call('GET', '/storage/api/v1/storage/objects', { token: suspendedClientToken }),
      refused: { status: 403, code: 'PROJECT_SUSPENDED' },
    },
    {
      name: 'its client asks /token for new tokens (client_credentials)',
      attack: async () =>
        await postForm(platform.url, '/token', {
          grant_type: 'client_credentials',
          client_id: b.clientId,
          client_secret: b.clientSecret,
        }),
      refused: { status: 403, oauthError: 'unauthorized_client' },
    },
    {
      name: 'an anonymous caller fires its webhook',
      attack: () => call('POST', `/webhooks/${b.id}/hook`, { body: { x: 1 } }),
      refused: { status: 403, code: 'PROJECT_SUSPENDED' },
    },
    {
      name: 'a visitor opens its hosted sign-in page',
      attack: async () => {
        const res = await fetch(
          `${platform.url}/authorize?${new URLSearchParams({ client_id: b.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid' })}`,
          { redirect: 'manual' },
        );
        return { status: res.status, body: await res.text(), headers: res.headers };
      },
      refused: { status: 403 },
    },
    {
      name: 'its own key through /graphql',
      attack: async () => asRest(await gql({ apiKey: b.apiKey }, '{ dataFind(table: "notes") { rows } }')),
      refused: { status: 403, code: 'PROJECT_SUSPENDED' },
      // The neighbour project is not touched by the suspension; resumed, the project has its data and works again.
      intact: async () => {
        expect((await call('POST', '/v1/find', { apiKey: a.apiKey, body: { table: 'notes' } })).status).toBe(200);
        expect((await asOperator('POST', `/projects/${b.id}/resume`)).status).toBe(200);
        await bIntact();
        expect((await call('GET', '/userinfo', { token: suspendedUserToken })).status).toBe(200);
      },
    },
  ]);
});

// Last: it locks this test's address out of the admin API for the rest of the window.
describe('guessing operator keys', () => {
  attackTable([
    {
      name: 'guessing operator keys from one address is rate limited (the right key then waits too)',
      attack: async () => {
        let last: Res | undefined;
        for (let i = 0; i <= OPERATOR_KEY_FAILURES_PER_ADDRESS + 1; i++)
          last = await call('GET', '/admin/api/v1/plans', { token: `top_guess${i}${'g'.repeat(40)}` });
        return last!;
      },
      refused: { status: 429, code: 'RATE_LIMITED', headers: ['retry-after'] },
      // Other credentials from the same address are not affected.
      intact: async () =>
        expect((await call('POST', '/v1/find', { apiKey: a.apiKey, body: { table: 'notes' } })).status).toBe(200),
    },
  ]);
});
