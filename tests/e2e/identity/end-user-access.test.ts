// End-users with real access tokens from /token (password grant) over HTTP: the data API runs their requests
// under row level security with their id, storage policies decide what their uploads and downloads may do,
// and a revoked session stops both at once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { newProject, passwordGrant, postForm, registerUser, type Project } from './identity-fixtures.ts';
import { STORAGE, download, upload } from '../storage/storage-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let project: Project;
const users: Record<'ada' | 'bob', { id: string; token: string; refresh: string }> = {} as never;

beforeAll(async () => {
  platform = await startOneProcess();
  call = client(platform.url);
  project = await newProject(platform.url);
  await waitFor(
    async () =>
      (await call('POST', '/v1/rawSQL', { apiKey: project.apiKey, body: { sql: 'select 1 as one' } })).status === 200,
    { message: 'project schema' },
  );
  for (const sql of [
    "create table notes (id serial primary key, owner text not null default current_setting('request.user_id', true), body text not null)",
    'alter table notes enable row level security',
    "create policy own_notes on notes using (owner = current_setting('request.user_id', true)) with check (owner = current_setting('request.user_id', true))",
    'create table plain (id serial primary key)',
  ])
    expect((await call('POST', '/v1/rawSQL', { apiKey: project.apiKey, body: { sql } })).status).toBe(200);
  for (const name of ['ada', 'bob'] as const) {
    const u = await registerUser(platform.url, project);
    const t = await passwordGrant(platform.url, project, u);
    expect(t.status).toBe(200);
    users[name] = { id: u.id, token: t.body.access_token as string, refresh: t.body.refresh_token as string };
  }
  const policy = (body: Record<string, unknown>) =>
    call('POST', `${STORAGE}/policies`, { apiKey: project.apiKey, body });
  expect(
    (
      await policy({
        name: 'own files',
        folder: 'private',
        operations: ['read', 'write', 'delete', 'list'],
        principal: 'owner',
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await policy({
        name: 'members read',
        folder: 'members',
        operations: ['read', 'list'],
        principal: 'authenticated',
      })
    ).status,
  ).toBe(201);
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

const as = (who: 'ada' | 'bob') => ({ token: users[who].token });
const data = (action: string, body: unknown, creds: { token?: string; apiKey?: string }): Promise<Res> =>
  call('POST', `/v1/${action}`, { ...creds, body });
const file = (folder: string, name: string, content: string) => [
  { name: 'folder', value: folder },
  { name: 'confirm', value: 'true' },
  { name: 'file', filename: name, contentType: 'text/plain', body: Buffer.from(content) },
];

describe('the data API with an end-user access token', () => {
  it('writes rows as the user and shows each user only their own rows', async () => {
    expect((await data('insert', { table: 'notes', values: { body: 'ada one' } }, as('ada'))).status).toBe(201);
    expect((await data('insert', { table: 'notes', values: { body: 'bob one' } }, as('bob'))).status).toBe(201);
    const ada = await data('find', { table: 'notes', select: ['owner', 'body'] }, as('ada'));
    expect(ada.status).toBe(200);
    expect(ada.body.rows).toEqual([{ owner: users.ada.id, body: 'ada one' }]);
    const all = await data('find', { table: 'notes', select: ['body'], orderBy: 'id' }, { apiKey: project.apiKey });
    expect(all.body.rows.map((r: { body: string }) => r.body)).toEqual(['ada one', 'bob one']);
  });

  it("refuses a row written in another user's name, rawSQL, and tables without row level security", async () => {
    expect(
      (await data('insert', { table: 'notes', values: { owner: users.bob.id, body: 'forged' } }, as('ada'))).status,
    ).toBe(403);
    expect(
      (await data('update', { table: 'notes', set: { body: 'changed' }, where: { owner: users.bob.id } }, as('ada')))
        .body,
    ).toMatchObject({ count: 0 });
    expect((await data('rawSQL', { sql: 'select 1' }, as('ada'))).status).toBe(403);
    expect((await data('find', { table: 'plain' }, as('ada'))).status).toBe(403);
  });

  it('refuses a garbage or tampered token with 401', async () => {
    expect((await data('find', { table: 'notes' }, { token: 'not-a-jwt' })).status).toBe(401);
    const [h, p, s] = users.ada.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: users.bob.id })).toString('base64url')}.${s}`;
    expect((await data('find', { table: 'notes' }, { token: forged })).status).toBe(401);
  });
});

describe('storage policies with an end-user access token', () => {
  it('lets the uploader read their own private file, and no one else', async () => {
    const up = await upload(platform.url, file('private', 'ada.txt', 'ada private'), as('ada'));
    expect({ status: up.status, body: up.body }).toMatchObject({ status: 201 });
    const id = up.body.object.id as string;
    const own = await download(platform.url, id, as('ada'));
    expect([own.status, own.bytes.toString()]).toEqual([200, 'ada private']);
    expect((await download(platform.url, id, as('bob'))).status).toBe(403);
    expect([401, 403]).toContain((await download(platform.url, id)).status);
    expect((await call('DELETE', `${STORAGE}/objects/${id}`, as('bob'))).status).toBe(403);
  });

  it('lets any signed-in user read a members file the project uploaded, and refuses writes there', async () => {
    const up = await upload(platform.url, file('members', 'news.txt', 'for members'), { apiKey: project.apiKey });
    expect(up.status).toBe(201);
    const got = await download(platform.url, up.body.object.id as string, as('bob'));
    expect([got.status, got.bytes.toString()]).toEqual([200, 'for members']);
    expect([401, 403]).toContain((await download(platform.url, up.body.object.id as string)).status);
    expect((await upload(platform.url, file('members', 'spam.txt', 'no'), as('bob'))).status).toBe(403);
  });
});

describe('a revoked session', () => {
  it('stops the data API and storage at once', async () => {
    expect((await data('find', { table: 'notes' }, as('bob'))).status).toBe(200);
    const revoked = await postForm(
      platform.url,
      '/revocation',
      { token: users.bob.refresh, token_type_hint: 'refresh_token' },
      { basic: [project.clientId, project.clientSecret] },
    );
    expect(revoked.status).toBe(200);
    expect((await data('find', { table: 'notes' }, as('bob'))).status).toBe(401);
    const up = await upload(platform.url, file('members', 'x.txt', 'x'), { apiKey: project.apiKey });
    expect((await download(platform.url, up.body.object.id as string, as('bob'))).status).toBe(401);
    expect((await data('find', { table: 'notes' }, as('ada'))).status).toBe(200);
  });
});
