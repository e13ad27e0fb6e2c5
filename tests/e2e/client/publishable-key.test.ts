// The publishable key (`tpk_...`) over HTTP: shown beside the secret key, regenerable, and only what a browser
// may do: sign-up and password reset, the data API as the project's anonymous role under row level security,
// storage under public policies, public functions. Everything else answers 403 naming the key kind, over REST and
// GraphQL alike. A project made before the anonymous role existed gets it on its first anonymous call.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTessera, type Tessera } from '../../../main.ts';
import { createTestDatabase } from '../../support/database.ts';
import { TEST_SECRET, tmpDataDir } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { newProject, passwordGrant, registerUser, type Project } from '../identity/identity-fixtures.ts';
import { STORAGE, download, upload } from '../storage/storage-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let tessera: Tessera;
let base: string;
let call: ReturnType<typeof client>;
let project: Project;
let pk: string;

const start = async () => {
  tessera = await startTessera({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: db.url,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
  });
  base = tessera.url;
  call = client(base);
};

const sql = async (text: string) => {
  const res = await call('POST', '/v1/rawSQL', { apiKey: project.apiKey, body: { sql: text } });
  if (res.status !== 200) throw new Error(`${text}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

const refusedAsPublishable = (res: Res) => {
  expect(res.status).toBe(403);
  expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { key_kind: 'publishable' } });
  expect(res.body.error.message).toMatch(/publishable key \(tpk_/);
};

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = tmpDataDir();
  await start();
  project = await newProject(base);
  const got = await call('GET', `/auth/api/v1/projects/${project.id}`, { token: project.tenantToken });
  pk = got.body.project.publishable_key;
  await sql(`create table posts (id serial primary key, title text not null, published boolean not null default false,
    owner text default nullif(current_setting('request.user_id', true), ''))`);
  await sql('alter table posts enable row level security');
  // Anyone (visitors and end-users) reads published posts; only end-users write, as themselves.
  await sql(`create policy read_published on posts for select using (published)`);
  await sql(
    `create policy visitors_suggest on posts for insert with check (current_setting('request.role', true) = 'anon' and not published and owner is null)`,
  );
  await sql(
    `create policy users_write on posts for insert with check (current_setting('request.role', true) = 'authenticated' and owner = current_setting('request.user_id', true))`,
  );
  await sql("insert into posts (title, published) values ('hello', true), ('draft', false)");
  await sql('create table secrets (id serial primary key, v text)');
}, 120_000);

afterAll(async () => {
  await tessera?.close();
  await db?.drop();
});

describe('the publishable key of a project', () => {
  it('is shown beside the API key, with its own prefix, and in lists as a prefix', async () => {
    expect(pk).toMatch(/^tpk_[A-Za-z0-9_-]{40,}$/);
    const got = await call('GET', `/auth/api/v1/projects/${project.id}`, { token: project.tenantToken });
    expect(got.body.project).toMatchObject({
      api_key: project.apiKey,
      publishable_key: pk,
      publishable_key_prefix: pk.slice(0, 12),
    });
    const list = await call('GET', '/auth/api/v1/projects', { token: project.tenantToken });
    expect(list.body.projects[0]).toMatchObject({ publishable_key_prefix: pk.slice(0, 12) });
    expect(list.body.projects[0]).not.toHaveProperty('publishable_key');
    const gql = await call('POST', '/graphql', {
      token: project.tenantToken,
      body: { query: `{ project(id: "${project.id}") { publishableKey apiKey } }` },
    });
    expect(gql.body.data.project).toEqual({ publishableKey: pk, apiKey: project.apiKey });
  });

  it('is regenerable: the old one is refused at once, the secret key stays', async () => {
    const other = await newProject(base);
    const before = (await call('GET', `/auth/api/v1/projects/${other.id}`, { token: other.tenantToken })).body.project
      .publishable_key as string;
    expect(
      (
        await call('POST', '/register', {
          apiKey: before,
          body: { email: `r-${Date.now()}@example.com`, password: 'a long enough password' },
        })
      ).status,
    ).toBe(201);
    const res = await call('POST', `/auth/api/v1/projects/${other.id}/regenerate-publishable-key`, {
      token: other.tenantToken,
    });
    expect(res.status).toBe(200);
    expect(res.body.project.publishable_key).toMatch(/^tpk_/);
    expect(res.body.project.publishable_key).not.toBe(before);
    expect(res.body.project.api_key).toBe(other.apiKey);
    const old = await call('POST', '/register', {
      apiKey: before,
      body: { email: `r2-${Date.now()}@example.com`, password: 'a long enough password' },
    });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('INVALID_API_KEY');
    expect(
      (
        await call('POST', '/register', {
          apiKey: res.body.project.publishable_key,
          body: { email: `r3-${Date.now()}@example.com`, password: 'a long enough password' },
        })
      ).status,
    ).toBe(201);
    // Failure paths of the new row: no credential, a foreign tenant, an unknown project, the key itself.
    expect((await call('POST', `/auth/api/v1/projects/${other.id}/regenerate-publishable-key`)).status).toBe(401);
    expect(
      (
        await call('POST', `/auth/api/v1/projects/${other.id}/regenerate-publishable-key`, {
          token: project.tenantToken,
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await call('POST', `/auth/api/v1/projects/00000000-0000-4000-8000-000000000000/regenerate-publishable-key`, {
          token: other.tenantToken,
        })
      ).status,
    ).toBe(404);
    refusedAsPublishable(
      await call('POST', `/auth/api/v1/projects/${other.id}/regenerate-publishable-key`, {
        apiKey: res.body.project.publishable_key,
      }),
    );
  });

  it('signs up end-users and starts password resets and e-mail verification', async () => {
    const email = `visitor-${Date.now()}@example.com`;
    const reg = await call('POST', '/register', { apiKey: pk, body: { email, password: 'a long enough password' } });
    expect(reg.status).toBe(201);
    expect(reg.body.user).toMatchObject({ email, project_id: project.id });
    expect((await call('POST', '/password/reset/request', { apiKey: pk, body: { email } })).status).toBeLessThan(300);
    expect((await call('POST', '/email/verify/request', { apiKey: pk, body: { email } })).status).toBeLessThan(300);
  });

  it('reads and writes the data API as the anonymous role, under row level security', async () => {
    const found = await call('POST', '/v1/find', { apiKey: pk, body: { table: 'posts', orderBy: 'id' } });
    expect(found.status).toBe(200);
    expect(found.body.rows.map((r: { title: string }) => r.title)).toEqual(['hello']);
    const suggested = await call('POST', '/v1/insert', {
      apiKey: pk,
      body: { table: 'posts', values: { title: 'from a visitor' }, returning: false },
    });
    expect(suggested.status).toBe(201);
    // A visitor cannot publish, nor write in a user's name (the policies say so).
    const published = await call('POST', '/v1/insert', {
      apiKey: pk,
      body: { table: 'posts', values: { title: 'spam', published: true } },
    });
    expect(published.status).toBe(403);
    const count = await call('POST', '/v1/aggregate', {
      apiKey: project.apiKey,
      body: { table: 'posts', aggregates: [{ fn: 'count', as: 'n' }] },
    });
    expect(Number(count.body.rows[0].n)).toBe(3);
    // A table without row level security is closed to it; rawSQL is an admin operation, alone or in a transaction.
    const plain = await call('POST', '/v1/find', { apiKey: pk, body: { table: 'secrets' } });
    expect(plain.status).toBe(403);
    expect(plain.body.error.message).toMatch(/publishable key may only use tables with row level security/);
    refusedAsPublishable(await call('POST', '/v1/rawSQL', { apiKey: pk, body: { sql: 'select 1' } }));
    refusedAsPublishable(
      await call('POST', '/v1/transaction', {
        apiKey: pk,
        body: {
          operations: [
            { action: 'find', table: 'posts' },
            { action: 'rawSQL', sql: 'select 1' },
          ],
        },
      }),
    );
    refusedAsPublishable(await call('GET', '/v1/publication', { apiKey: pk }));
  });

  it('gives end-users their own rights, unchanged', async () => {
    const user = await registerUser(base, project);
    const token = (await passwordGrant(base, project, user)).body.access_token as string;
    // (No `returning`: the new row is unpublished, and RETURNING needs the SELECT policy too.)
    const mine = await call('POST', '/v1/insert', {
      token,
      body: { table: 'posts', values: { title: 'mine', owner: user.id }, returning: false },
    });
    expect(mine.status).toBe(201);
    const theirs = await call('POST', '/v1/insert', {
      token,
      body: { table: 'posts', values: { title: 'forged', owner: 'someone-else' }, returning: false },
    });
    expect(theirs.status).toBe(403);
  });

  it('reaches storage only where a public policy allows it', async () => {
    await call('POST', `${STORAGE}/policies`, {
      apiKey: project.apiKey,
      body: { name: 'public', folder: 'public', operations: ['read', 'list', 'write'], principal: 'public' },
    });
    await call('POST', `${STORAGE}/policies`, {
      apiKey: project.apiKey,
      body: { name: 'members', folder: 'members', operations: ['read', 'list', 'write'], principal: 'authenticated' },
    });
    const up = await upload(
      base,
      [
        { name: 'folder', value: 'public' },
        { name: 'confirm', value: 'true' },
        { name: 'file', filename: 'a.txt', contentType: 'text/plain', body: Buffer.from('hi') },
      ],
      { apiKey: pk },
    );
    expect(up.status).toBe(201);
    expect((await download(base, up.body.object.id, { apiKey: pk })).bytes.toString()).toBe('hi');
    const listed = await call('GET', `${STORAGE}/objects?folder=public`, { apiKey: pk });
    expect(listed.status).toBe(200);
    expect(listed.body.objects).toHaveLength(1);
    const members = await upload(
      base,
      [
        { name: 'folder', value: 'members' },
        { name: 'file', filename: 'b.txt', body: Buffer.from('x') },
      ],
      { apiKey: pk },
    );
    expect(members.status).toBe(403);
    // Naming another project is answered like an unknown one; managing policies and usage are the secret key's.
    const other = await newProject(base);
    expect((await call('GET', `${STORAGE}/objects?project_id=${other.id}`, { apiKey: pk })).status).toBe(404);
    refusedAsPublishable(await call('GET', `${STORAGE}/policies`, { apiKey: pk }));
    refusedAsPublishable(await call('GET', `${STORAGE}/usage`, { apiKey: pk }));
  });

  it('invokes only functions marked public, never as a dry run', async () => {
    const steps = [{ name: 'out', kind: 'Transform', expression: { hello: '{{ input.body.name }}' } }];
    expect(
      (
        await call('POST', '/edge/api/v1/functions', {
          apiKey: project.apiKey,
          body: { name: 'greet', public: true, steps },
        })
      ).body.function,
    ).toMatchObject({ public: true });
    expect(
      (await call('POST', '/edge/api/v1/functions', { apiKey: project.apiKey, body: { name: 'internal', steps } })).body
        .function,
    ).toMatchObject({ public: false });
    const ok = await call('POST', '/edge/api/v1/invoke/greet', { apiKey: pk, body: { name: 'web' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ hello: 'web' });
    refusedAsPublishable(await call('POST', '/edge/api/v1/invoke/internal', { apiKey: pk, body: {} }));
    // An unknown function is refused the same way: no probing for names.
    refusedAsPublishable(await call('POST', '/edge/api/v1/invoke/nothing-here', { apiKey: pk, body: {} }));
    refusedAsPublishable(await call('POST', '/edge/api/v1/invoke/greet?dry_run=true', { apiKey: pk, body: {} }));
    refusedAsPublishable(await call('GET', '/edge/api/v1/functions', { apiKey: pk }));
    refusedAsPublishable(await call('POST', '/edge/api/v1/secrets', { apiKey: pk, body: { name: 'X', value: 'y' } }));
    const bad = await call('POST', '/edge/api/v1/functions', {
      apiKey: project.apiKey,
      body: { name: 'bad', public: 'yes', steps },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/public/);
    // End-users invoke public functions too.
    const user = await registerUser(base, project);
    const token = (await passwordGrant(base, project, user)).body.access_token as string;
    expect((await call('POST', '/edge/api/v1/invoke/greet', { token, body: { name: 'u' } })).body).toEqual({
      hello: 'u',
    });
    expect((await call('POST', '/edge/api/v1/invoke/internal', { token, body: {} })).status).toBe(403);
  });

  it('receives realtime changes under row level security, delete events included', async () => {
    expect(
      (
        await call('POST', `/auth/api/v1/projects/${project.id}/publications`, {
          token: project.tenantToken,
          body: { table: 'posts', enabled: true },
        })
      ).status,
    ).toBe(200);
    const abort = new AbortController();
    const res = await fetch(`${base}/realtime`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': pk },
      body: JSON.stringify({ query: 'subscription { dataChanges(table: "posts") { operation row old } }' }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const events: { operation: string; row: { title?: string } | null; old: Record<string, unknown> | null }[] = [];
    void (async () => {
      const reader = res.body!.getReader();
      let buffer = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffer += new TextDecoder().decode(value);
          for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
            const chunk = buffer.slice(0, i);
            buffer = buffer.slice(i + 2);
            const data = chunk.split('\n').find((l) => l.startsWith('data:'));
            if (data && chunk.includes('event: next')) events.push(JSON.parse(data.slice(5)).data.dataChanges);
          }
        }
      } catch {
        // aborted
      }
    })();
    await waitFor(
      async () => {
        // The hidden row first: a visitor never hears of it; then a published one.
        await sql("insert into posts (title, published) values ('hidden live', false), ('public live', true)");
        return await waitFor(() => events.some((e) => e.row?.title === 'public live'), {
          timeoutMs: 300,
          intervalMs: 50,
          message: 'this probe',
        }).catch(() => false);
      },
      { message: 'a realtime insert' },
    );
    const hiddenId = (await sql("select id from posts where title = 'hidden live' limit 1")).rows[0].id;
    const publicId = (await sql("select id from posts where title = 'public live' limit 1")).rows[0].id;
    await sql(`delete from posts where id in (${Number(hiddenId)}, ${Number(publicId)})`);
    await waitFor(async () => events.some((e) => e.operation === 'delete'), { message: 'a realtime delete' });
    // A published row inserted after the deletes arrives after any event they caused.
    await sql("insert into posts (title, published) values ('after the deletes', true)");
    await waitFor(() => events.some((e) => e.row?.title === 'after the deletes'), {
      message: 'the insert after the deletes',
    });
    abort.abort();
    expect(events.some((e) => e.row?.title === 'hidden live')).toBe(false);
    const deletes = events.filter((e) => e.operation === 'delete');
    expect(deletes).toEqual([expect.objectContaining({ old: { id: publicId } })]);
  });

  it('is refused everything else with 403 naming the key kind, over REST and GraphQL', async () => {
    refusedAsPublishable(await call('GET', '/auth/api/v1/projects', { apiKey: pk }));
    refusedAsPublishable(await call('GET', '/admin/users', { apiKey: pk }));
    refusedAsPublishable(await call('GET', '/edge/api/v1/executions', { apiKey: pk }));
    refusedAsPublishable(
      await call('GET', '/mfa/enroll', { apiKey: pk }).then(async (r) =>
        r.status === 404 ? await call('POST', '/mfa/enroll', { apiKey: pk }) : r,
      ),
    );
    const gql = await call('POST', '/graphql', { apiKey: pk, body: { query: '{ edgeFunctions { items { id } } }' } });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { key_kind: 'publishable' } });
    const mixed = await call('POST', '/graphql', {
      apiKey: pk,
      body: { query: '{ dataFind(table: "posts") { rows } storagePolicies { items { id } } }' },
    });
    expect(
      mixed.body.errors.some(
        (e: { extensions: { details?: { key_kind?: string } } }) => e.extensions.details?.key_kind === 'publishable',
      ),
    ).toBe(true);
    const allowed = await call('POST', '/graphql', {
      apiKey: pk,
      body: { query: '{ dataFind(table: "posts", orderBy: "id") { rows } }' },
    });
    expect(allowed.body.data.dataFind.rows[0]).toMatchObject({ title: 'hello' });
  });
});

describe('a project made before the anonymous role existed', () => {
  it('gets the role, with rights on its existing tables, on its first anonymous call', async () => {
    // Undo what provisioning did for the anonymous role, as in a project made before it existed.
    const row = await (async () => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ database_name: string; anon_role_name: string }>(
          'select database_name, anon_role_name from data_project_roles where project_id = $1',
          [project.id],
        );
        return rows[0]!;
      } finally {
        await c.end();
      }
    })();
    await tessera.close();
    const projectDb = new URL(db.url);
    projectDb.pathname = `/${row.database_name}`;
    const p = new pg.Client({ connectionString: projectDb.toString() });
    await p.connect();
    await p.query(`drop owned by ${row.anon_role_name}`);
    await p.end();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query(`drop role ${row.anon_role_name}`);
    await c.query('update data_project_roles set anon_role_name = null where project_id = $1', [project.id]);
    await c.end();
    await start();
    const found = await call('POST', '/v1/find', { apiKey: pk, body: { table: 'posts', where: { title: 'hello' } } });
    expect(found.status).toBe(200);
    expect(found.body.rows).toHaveLength(1);
    const again = new pg.Client({ connectionString: db.url });
    await again.connect();
    const { rows } = await again.query('select anon_role_name from data_project_roles where project_id = $1', [
      project.id,
    ]);
    await again.end();
    expect(rows[0].anon_role_name).toBe(row.anon_role_name);
  }, 60_000);
});
