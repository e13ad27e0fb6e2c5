// The fleet in split mode (issue 29 item 2): two data processes (the split launcher's and a second instance started
// here against the same platform database) both find a project's server from its `data_project_roles` row. The
// second server is registered after both processes are up (each learns of it from the registry, not from its start),
// a project is placed on it, and each process, called directly with the router's signed context, reads and writes that
// project's database on that server; a project of the default server is served by both from the default server.
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  SPLIT_START_HOOK_MS,
  startProcess,
  startSplit,
  stopProcess,
  TEST_SECRET,
  tmpDataDir,
  type TestPlatform,
} from '../../support/platform.ts';
import { pg15Available, startPgServer, type TestPgServer } from '../../support/pg-servers.ts';
import { addProjectServer, placeOn, projectServer } from '../../support/fleet.ts';
import { client, type Res } from '../../support/http.ts';
import { freePort } from '../../../platform/net.ts';
import { signContext } from '../../../platform/auth.ts';
import { withSplitStartLock } from '../../support/start-lock.ts';
import { createProject, dataCall, signIn, type Call, type DataProject } from './data-support.ts';

type Layout = { router: { url: string }; subgraphs: Record<string, { url: string }> };

const available = pg15Available();
const suite = available ? describe : describe.skip;
if (!available) console.warn('data-fleet-split skipped: no PostgreSQL 15 binaries (tests/support/pg-servers.ts)');

let server: TestPgServer | undefined;
let platform: TestPlatform | undefined;
let second: ChildProcess | undefined;
let secondDir = '';
let call: Call;
let tenantToken: string;
let tenantId: string;
/** The GraphQL endpoints of the two data processes. */
let dataUrls: string[] = [];

/** Runs a data action's GraphQL field on data process `i` as the project (the router's signed context). */
async function direct(i: number, project: DataProject, query: string): Promise<Res> {
  const ctx = await signContext(
    { requestId: `fleet-split-${i}`, principal: { kind: 'project', projectId: project.id, tenantId } },
    TEST_SECRET,
  );
  const res = await fetch(dataUrls[i]!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tessera-context': ctx },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

suite('the fleet in split mode: two data processes', () => {
  beforeAll(async () => {
    server = await startPgServer();
    platform = await startSplit();
    call = client(platform.url);
    const layout = JSON.parse(fs.readFileSync(path.join(platform.dataDir, 'split.json'), 'utf8')) as Layout;
    secondDir = tmpDataDir();
    const port = await withSplitStartLock(async () => {
      const p = await freePort();
      second = await startProcess(
        [path.resolve('main.ts'), '--role', 'subgraph:data'],
        {
          LOG_LEVEL: 'warn',
          DATABASE_URL: platform!.databaseUrl,
          TESSERA_DATA_DIR: secondDir,
          TESSERA_INTERNAL_SECRET: TEST_SECRET,
          TESSERA_SUBGRAPH_URLS: Object.entries(layout.subgraphs)
            .map(([n, s]) => `${n}=${s.url}`)
            .join(','),
          TESSERA_ROUTER_URL: layout.router.url,
          TESSERA_SUBGRAPH_HOST: '127.0.0.1',
          TESSERA_SUBGRAPH_PORT: String(p),
          TESSERA_DEFAULT_PLAN: 'free',
        },
        `http://127.0.0.1:${p}/readyz`,
        180_000,
      );
      return p;
    });
    dataUrls = [layout.subgraphs.data!.url, `http://127.0.0.1:${port}/graphql`];
    tenantToken = await signIn(call);
    tenantId = (await call('GET', '/auth/api/v1/tenant', { token: tenantToken })).body.tenant.id as string;
    // Registered after both data processes started.
    await addProjectServer(platform, 'pg-a', server.url);
  }, SPLIT_START_HOOK_MS + 180_000);

  afterAll(async () => {
    if (second) await stopProcess(second);
    await platform?.close();
    await server?.stop();
    if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true });
  }, 120_000);

  it.each(['pg-a', 'default'])(
    'has both data processes read and write the project of server %s on that server',
    async (id) => {
      await placeOn(platform!, id);
      const project = await createProject(call, tenantToken, `split on ${id}`);
      // Made by the second process's first call (or by the launcher's process on project.created: either places it).
      const made = await direct(
        1,
        project,
        'mutation { dataRawSql(sql: "create table t (id int primary key, via text)") { rowCount } }',
      );
      expect({ status: made.status, errors: made.body.errors }).toEqual({ status: 200, errors: undefined });
      const where = (await projectServer(platform!, project.id))!;
      expect(where.serverId).toBe(id);
      for (const i of [0, 1]) {
        const res = await direct(
          i,
          project,
          `mutation { dataInsert(table: "t", values: {id: ${i}, via: "process ${i}"}) { count } }`,
        );
        expect({ status: res.status, body: res.body }).toEqual({
          status: 200,
          body: { data: { dataInsert: { count: 1 } } },
        });
      }
      for (const i of [0, 1]) {
        const res = await direct(i, project, 'query { dataFind(table: "t", orderBy: "id") { rows } }');
        expect(res.body.data.dataFind.rows).toEqual([
          { id: 0, via: 'process 0' },
          { id: 1, via: 'process 1' },
        ]);
      }
      // Through the front door too, and on the server itself.
      expect((await dataCall(call, project.apiKey)('find', { table: 't', select: ['via'] })).body.rows).toHaveLength(2);
      const url = new URL(id === 'pg-a' ? server!.url : platform!.databaseUrl);
      url.pathname = `/${where.database}`;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        expect(
          (await c.query(`select via from "p_${project.id.replace(/-/g, '')}".t order by id`)).rows.map((r) => r.via),
        ).toEqual(['process 0', 'process 1']);
      } finally {
        await c.end();
      }
      if (id === 'pg-a') {
        const platformDb = new pg.Client({ connectionString: platform!.databaseUrl });
        await platformDb.connect();
        try {
          expect(
            (await platformDb.query('select 1 from pg_database where datname = $1', [where.database])).rowCount,
          ).toBe(0);
        } finally {
          await platformDb.end();
        }
      }
    },
    60_000,
  );
});
