// Project databases on another PostgreSQL server than the platform's (TESSERA_PROJECTS_DATABASE_URL): the first step
// of placing projects across several servers. The platform's tables stay on its own server; each project's database
// and roles are made on the other one, serve every data action (after-hooks' outbox and realtime included), and go
// with the project.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startDatabase, type RunningDatabase } from '../../../platform/database.ts';
import { createLogger } from '../../../platform/logger.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { createProject, dataCall, publish, signIn, sseText, type Call, type DataProject } from './data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

let projectsServer: RunningDatabase;
let projectsDir: string;
let platform: TestPlatform;
let call: Call;
let project: DataProject;
let projects: pg.Client;
let platformDb: pg.Client;

beforeAll(async () => {
  projectsDir = path.resolve('.tessera', 'test-pg', `projects-${process.pid}`);
  fs.rmSync(projectsDir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(projectsDir), { recursive: true, mode: 0o755 });
  projectsServer = await startDatabase({ dataDir: projectsDir, logger: createLogger('silent') });
  platform = await startOneProcess({ TESSERA_PROJECTS_DATABASE_URL: projectsServer.url });
  call = client(platform.url);
  project = await createProject(call, await signIn(call), 'elsewhere');
  projects = new pg.Client({ connectionString: projectsServer.url });
  await projects.connect();
  platformDb = new pg.Client({ connectionString: platform.tessera!.config.databaseUrl });
  await platformDb.connect();
}, 120_000);

afterAll(async () => {
  await projects?.end();
  await platformDb?.end();
  await platform?.close();
  await projectsServer?.stop();
  fs.rmSync(projectsDir, { recursive: true, force: true });
});

describe('project databases on their own server', () => {
  it("creates the project's database and roles there, and nothing of them on the platform's server", async () => {
    const data = dataCall(call, project.apiKey);
    expect(
      (await data('rawSQL', { sql: 'create table items (id serial primary key, name text not null)' })).status,
    ).toBe(200);
    expect((await data('insert', { table: 'items', values: [{ name: 'a' }, { name: 'b' }] })).status).toBe(201);
    expect((await data('find', { table: 'items', orderBy: 'id' })).body.rows).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    const { rows } = await platformDb.query<{ database_name: string; role_name: string }>(
      'select database_name, role_name from data_project_roles where project_id = $1',
      [project.id],
    );
    const names = rows[0]!;
    expect((await projects.query('select 1 from pg_database where datname = $1', [names.database_name])).rowCount).toBe(
      1,
    );
    expect((await projects.query('select 1 from pg_roles where rolname = $1', [names.role_name])).rowCount).toBe(1);
    expect(
      (await platformDb.query('select 1 from pg_database where datname = $1', [names.database_name])).rowCount,
    ).toBe(0);
    expect(
      (await platformDb.query('select 1 from pg_namespace where nspname = $1', [`p_${project.id.replace(/-/g, '')}`]))
        .rowCount,
    ).toBe(0);
  });

  it('runs after-hooks through the outbox in the project database and streams realtime changes from it', async () => {
    const data = dataCall(call, project.apiKey);
    expect((await data('rawSQL', { sql: 'create table audit (id serial primary key, name text)' })).status).toBe(200);
    const fn = await call('POST', '/edge/api/v1/functions', {
      apiKey: project.apiKey,
      body: {
        name: 'audit',
        steps: [
          {
            name: 'w',
            kind: 'Database',
            query: { action: 'insert', table: 'audit', values: { name: '{{ input.body.row.name }}' } },
          },
        ],
      },
    });
    expect(fn.status).toBe(201);
    expect(
      (
        await call('POST', '/edge/api/v1/hooks', {
          apiKey: project.apiKey,
          body: { table: 'items', timing: 'after', events: ['insert'], function: 'audit' },
        })
      ).status,
    ).toBe(201);
    await publish(call, project, 'items');
    const sse = await sseText(
      platform.url,
      project.apiKey,
      'subscription { dataChanges(table: "items") { operation row } }',
    );
    let n = 0;
    await waitFor(
      async () => {
        expect((await data('insert', { table: 'items', values: { name: `live-${++n}` } })).status).toBe(201);
        return sse.text().includes('live-');
      },
      { message: 'a realtime change' },
    );
    await sse.close();
    expect(
      await waitFor(async () =>
        (await data('find', { table: 'audit', where: { name: 'live-1' } })).body.rows.length === 1 ? true : undefined,
      ),
    ).toBe(true);
  }, 60_000);

  it("drops the project's database and roles on that server with the project", async () => {
    const { rows } = await platformDb.query<{ database_name: string; role_name: string }>(
      'select database_name, role_name from data_project_roles where project_id = $1',
      [project.id],
    );
    const names = rows[0]!;
    expect((await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token: project.token })).status).toBe(204);
    // The database goes first, then the roles, in one drop.
    const gone = async () =>
      (
        await projects.query(
          'select 1 from pg_database where datname = $1 union all select 1 from pg_roles where rolname = $2',
          [names.database_name, names.role_name],
        )
      ).rowCount === 0;
    await waitFor(gone, { message: 'the database and role dropped' });
  }, 30_000);
});
