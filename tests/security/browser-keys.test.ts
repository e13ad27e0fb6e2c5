// Attack table of the browser-facing surface (issue 14): what someone holding a project's publishable key (it is in
// every page of the app) or running a page on another origin would try, each refused, with the neighbour intact.
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import { newProjectWithPk, type Project } from '../e2e/identity/identity-fixtures.ts';
import { STORAGE, upload } from '../e2e/storage/storage-fixtures.ts';
import { attackTable } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';

const APP = 'https://app.example.com';
const EVIL = 'https://evil.example.net';

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let a: Project & { pk: string };
let b: Project & { pk: string };

const sql = async (p: Project, text: string) => {
  const res = await call('POST', '/v1/rawSQL', { apiKey: p.apiKey, body: { sql: text } });
  if (res.status !== 200) throw new Error(`${text}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const count = async (p: Project, table: string) =>
  Number((await sql(p, `select count(*)::int as n from ${table}`)).rows[0].n);
const gql = (key: string, query: string): Promise<Res> => call('POST', '/graphql', { apiKey: key, body: { query } });
/** A GraphQL answer refused for the key kind, as a REST-shaped answer for the table. */
const refusedGql = async (res: Res): Promise<Res> => {
  const e = res.body.errors?.[0]?.extensions;
  return {
    status: e?.http?.status ?? res.status,
    body: { error: { code: e?.code, details: e?.details } },
    headers: res.headers,
  };
};

beforeAll(async () => {
  platform = await startOneProcess();
  call = client(platform.url);
  a = await newProjectWithPk(platform.url);
  b = await newProjectWithPk(platform.url);
  await waitFor(
    async () => (await call('POST', '/v1/rawSQL', { apiKey: a.apiKey, body: { sql: 'select 1' } })).status === 200,
    { message: 'project database' },
  );
  for (const p of [a, b]) {
    await sql(
      p,
      'create table posts (id serial primary key, title text not null, published boolean not null default false)',
    );
    await sql(p, 'alter table posts enable row level security');
    await sql(p, 'create policy read_published on posts for select using (published)');
    await sql(p, "insert into posts (title, published) values ('public', true), ('secret draft', false)");
    await sql(p, 'create table plain (id serial primary key, v text)');
    await sql(p, "insert into plain (v) values ('no rls here')");
  }
  await call('PUT', `/auth/api/v1/projects/${a.id}/cors`, { token: a.tenantToken, body: { allowed_origins: [APP] } });
  await call('POST', '/edge/api/v1/functions', {
    apiKey: a.apiKey,
    body: { name: 'private', steps: [{ name: 's', kind: 'Transform', expression: { ran: true } }] },
  });
  await call('POST', `${STORAGE}/policies`, {
    apiKey: b.apiKey,
    body: { name: 'pub', folder: 'public', operations: ['read', 'list', 'write'], principal: 'public' },
  });
}, 90_000);

afterAll(async () => {
  await platform?.close();
});

const forbiddenForKey = { status: 403, code: 'FORBIDDEN' } as const;

describe('the publishable key and other origins', () => {
  attackTable([
    {
      name: 'the publishable key reads a draft that row level security hides',
      attack: async () => {
        const res = await call('POST', '/v1/find', { apiKey: a.pk, body: { table: 'posts' } });
        expect(res.body.rows.map((r: { title: string }) => r.title)).toEqual(['public']);
        // The only way around the policy would be SQL of its own.
        return await call('POST', '/v1/rawSQL', { apiKey: a.pk, body: { sql: 'select title from posts' } });
      },
      refused: { ...forbiddenForKey, notContaining: () => ['secret draft'] },
      intact: async () => expect(await count(a, 'posts')).toBe(2),
    },
    {
      name: 'the publishable key reads a table without row level security',
      attack: async () => await call('POST', '/v1/find', { apiKey: a.pk, body: { table: 'plain' } }),
      refused: { status: 403, code: 'FORBIDDEN', notContaining: () => ['no rls here'] },
    },
    {
      name: 'the publishable key hides rawSQL inside a transaction, an alias, or a fragment',
      attack: async () => {
        const tx = await call('POST', '/v1/transaction', {
          apiKey: a.pk,
          body: {
            operations: [
              { action: 'find', table: 'posts' },
              { action: 'rawSQL', sql: 'delete from posts' },
            ],
          },
        });
        expect(tx.status).toBe(403);
        const aliased = await refusedGql(
          await gql(
            a.pk,
            'mutation { ok: dataInsert(table: "posts", values: {title: "x"}) { count } x: dataRawSql(sql: "delete from posts") { rowCount } }',
          ),
        );
        expect(aliased.status).toBe(403);
        return await refusedGql(
          await gql(
            a.pk,
            'mutation { ...F } fragment F on Mutation { ... on Mutation { dataRawSql(sql: "delete from posts") { rowCount } } }',
          ),
        );
      },
      refused: forbiddenForKey,
      intact: async () => expect(await count(a, 'posts')).toBe(2),
    },
    {
      name: 'the publishable key manages its project: secrets, functions, policies, users, publications, keys',
      attack: async () => {
        for (const [method, path, body] of [
          ['POST', '/edge/api/v1/secrets', { name: 'X', value: 'y' }],
          ['GET', '/edge/api/v1/functions', undefined],
          ['GET', `${STORAGE}/policies`, undefined],
          ['GET', '/admin/users', undefined],
          ['POST', '/v1/publication', { table: 'posts', enabled: true }],
          ['GET', '/auth/api/v1/projects', undefined],
          ['POST', `/auth/api/v1/projects/${a.id}/regenerate-key`, undefined],
          ['PUT', `/auth/api/v1/projects/${a.id}/cors`, { allowed_origins: [EVIL] }],
        ] as const) {
          const res = await call(method, path, { apiKey: a.pk, body });
          expect([path, res.status, res.body?.error?.details?.key_kind]).toEqual([path, 403, 'publishable']);
        }
        return await refusedGql(await gql(a.pk, `{ project(id: "${a.id}") { apiKey } }`));
      },
      refused: forbiddenForKey,
      intact: async () => {
        const got = await call('GET', `/auth/api/v1/projects/${a.id}/cors`, { token: a.tenantToken });
        expect(got.body.cors.allowed_origins).toEqual([APP]);
      },
    },
    {
      name: 'the publishable key invokes a function that is not public, or dry-runs it to see its steps',
      attack: async () => {
        expect((await call('POST', '/edge/api/v1/invoke/private', { apiKey: a.pk, body: {} })).status).toBe(403);
        return await call('POST', '/edge/api/v1/invoke/private?dry_run=true', { apiKey: a.pk, body: {} });
      },
      refused: { ...forbiddenForKey, notContaining: () => ['"ran"'] },
      intact: async () =>
        expect((await call('GET', '/edge/api/v1/executions', { apiKey: a.apiKey })).body.executions).toEqual([]),
    },
    {
      name: "project A's publishable key reaches project B's rows, files or functions",
      attack: async () => {
        const file = await upload(
          platform.url,
          [
            { name: 'folder', value: 'public' },
            { name: 'confirm', value: 'true' },
            { name: 'file', filename: 'b.txt', body: Buffer.from('b') },
          ],
          { apiKey: b.pk },
        );
        expect(file.status).toBe(201);
        expect(
          (await call('GET', `${STORAGE}/objects?project_id=${b.id}&folder=public`, { apiKey: a.pk })).status,
        ).toBe(404);
        expect((await call('GET', `${STORAGE}/download/${file.body.object.id}`, { apiKey: a.pk })).status).toBe(404);
        return await upload(
          platform.url,
          [
            { name: 'project_id', value: b.id },
            { name: 'folder', value: 'public' },
            { name: 'file', filename: 'x.txt', body: Buffer.from('x') },
          ],
          { apiKey: a.pk },
        );
      },
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: async () =>
        expect((await call('GET', `${STORAGE}/objects?folder=public`, { apiKey: b.apiKey })).body.objects).toHaveLength(
          1,
        ),
    },
    {
      name: 'a page on an origin the project did not allow uses its publishable key (the browser sends the Origin)',
      attack: async () =>
        await call('POST', '/register', {
          apiKey: a.pk,
          headers: { origin: EVIL },
          body: { email: `evil-${Date.now()}@example.com`, password: 'a long enough password' },
        }),
      refused: { status: 403, code: 'ORIGIN_NOT_ALLOWED' },
      intact: async () => expect((await call('GET', '/admin/users', { apiKey: a.apiKey })).body.users).toEqual([]),
    },
    {
      name: "a page on the allowed origin of project A uses project B's publishable key",
      attack: async () =>
        await call('POST', '/v1/find', { apiKey: b.pk, headers: { origin: APP }, body: { table: 'posts' } }),
      refused: { status: 403, code: 'ORIGIN_NOT_ALLOWED', notContaining: () => ['public'] },
    },
    {
      name: 'a page on another origin sends a preflight nobody allows, or asks for credentials with a wildcard rule',
      attack: async () => {
        const wildcard = await call('PUT', `/auth/api/v1/projects/${b.id}/cors`, {
          token: b.tenantToken,
          body: { allowed_origins: ['*'], allow_credentials: true },
        });
        expect([wildcard.status, wildcard.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
        const res = await fetch(`${platform.url}/v1/find`, {
          method: 'OPTIONS',
          headers: {
            origin: EVIL,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'x-api-key',
          },
        });
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
        return { status: res.status, body: await res.json(), headers: res.headers };
      },
      refused: { status: 403, code: 'ORIGIN_NOT_ALLOWED' },
    },
    {
      name: 'a replaced publishable key keeps working from a page that still ships it',
      attack: async () => {
        const old = b.pk;
        const fresh = await call('POST', `/auth/api/v1/projects/${b.id}/regenerate-publishable-key`, {
          token: b.tenantToken,
        });
        b = { ...b, pk: fresh.body.project.publishable_key };
        return await call('POST', '/v1/find', { apiKey: old, body: { table: 'posts' } });
      },
      refused: { status: 401, code: 'INVALID_API_KEY' },
      intact: async () =>
        expect((await call('POST', '/v1/find', { apiKey: b.pk, body: { table: 'posts' } })).status).toBe(200),
    },
  ]);
});
