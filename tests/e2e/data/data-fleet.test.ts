// Projects on a fleet of PostgreSQL servers (issue 29 item 2): one platform, its default server and two more
// (PostgreSQL 15, tests/support/pg-servers.ts), a project placed on each. On every one of them, everything that reaches
// a project's database must find the project's server from its `data_project_roles` row: every data action, the
// schema and migrations, realtime over SSE and graphql-ws, an after-write hook running a function whose Database step
// writes back, a function's Database step invoked directly, usage, and the project's deletion (its database dropped
// on ITS server). Each check is also made with SQL on the servers themselves: the rows are where the row says, and
// nowhere else. Last, one server stopped: its projects answer 503 in the documented error shape, the others work on.
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Client } from 'graphql-ws';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { pg15Available, startPgServers, type TestPgServer } from '../../support/pg-servers.ts';
import { addProjectServer, placeOn, projectServer, setServerUrl } from '../../support/fleet.ts';
import { client } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';
import { setPlanLimits } from '../../support/plans.ts';
import {
  createProject,
  dataCall,
  publish,
  signIn,
  sseText,
  wsClient,
  type Call,
  type DataProject,
} from './data-support.ts';

const F = '/edge/api/v1';
const SERVERS = ['default', 'pg-a', 'pg-b'] as const;
type ServerId = (typeof SERVERS)[number];

const available = pg15Available();
const suite = available ? describe : describe.skip;
if (!available) console.warn('data-fleet skipped: no PostgreSQL 15 binaries (tests/support/pg-servers.ts)');

let extra: TestPgServer[] = [];
let platform: TestPlatform;
let call: Call;
let token: string;
/** The superuser's (default: the platform role's) URL of each server, database `postgres` or the platform's. */
const urls = new Map<ServerId, string>();
const pgvector = new Map<ServerId, boolean>();
const projects = new Map<ServerId, DataProject>();
/** A postmaster the hung-server test stopped (SIGSTOP), continued whatever happens. */
let paused: number | undefined;

/** Runs `sql` on server `id` (in database `database`, else its maintenance database) as its superuser / platform role. */
async function onServer<T extends pg.QueryResultRow = Record<string, unknown>>(
  id: ServerId,
  sql: string,
  params: unknown[] = [],
  database?: string,
): Promise<T[]> {
  const url = new URL(urls.get(id)!);
  if (database) url.pathname = `/${encodeURIComponent(database)}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** The servers holding a database named `name`. */
async function serversHolding(name: string): Promise<ServerId[]> {
  const out: ServerId[] = [];
  for (const id of SERVERS)
    if ((await onServer(id, 'select 1 from pg_database where datname = $1', [name])).length > 0) out.push(id);
  return out;
}

/** The postmaster of the PostgreSQL server listening on `port` (tests/support/pg-servers.ts starts it with `-c port=N`). */
function postmasterOf(port: number): number {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let args: string[];
    try {
      args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (/postgres$/.test(args[0] ?? '') && args.includes('-D') && args.includes(`port=${port}`)) return Number(d);
  }
  throw new Error(`no postmaster on port ${port}`);
}

/** A project of a new tenant placed on `id`, its database made (its first data call) before placement moves on. */
async function projectOn(id: ServerId, name: string, tenant = token): Promise<DataProject> {
  await placeOn(platform, id);
  const p = await createProject(call, tenant, name);
  expect((await dataCall(call, p.apiKey)('rawSQL', { sql: 'select 1 as one' })).status).toBe(200);
  return p;
}

suite('projects on a fleet of servers', () => {
  beforeAll(async () => {
    extra = await startPgServers(2);
    platform = await startOneProcess();
    // The fleet is under test, not the free plan's per-minute budgets: each project here runs every data action, its
    // functions and their polls within a minute, and on a loaded CI machine its statements' time and its requests
    // crossed free's request rate or statement-time budget (an invoke answered 429). Its project count stays (below).
    await setPlanLimits(platform, 'free', { max_requests_per_minute: null, database_cpu_seconds_per_minute: null });
    call = client(platform.url);
    token = await signIn(call);
    urls.set('default', platform.databaseUrl);
    urls.set('pg-a', extra[0]!.url);
    urls.set('pg-b', extra[1]!.url);
    pgvector.set(
      'default',
      (await onServer('default', `select 1 from pg_available_extensions where name = 'vector'`)).length > 0,
    );
    pgvector.set('pg-a', extra[0]!.pgvector);
    pgvector.set('pg-b', extra[1]!.pgvector);
    await addProjectServer(platform, 'pg-a', extra[0]!.url);
    await addProjectServer(platform, 'pg-b', extra[1]!.url);
    for (const id of SERVERS) projects.set(id, await projectOn(id, `on ${id}`));
    // Every server takes new projects again (the outage test's neighbours are placed by weight, see there).
    await placeOn(platform, 'default');
  }, 180_000);

  afterAll(async () => {
    if (paused) process.kill(paused, 'SIGCONT');
    await platform?.close();
    await Promise.all(extra.map((s) => s.stop()));
  }, 120_000);

  it('places each project where its row says, and its database and role exist on that server and nowhere else', async () => {
    for (const id of SERVERS) {
      const where = await projectServer(platform, projects.get(id)!.id);
      expect(where?.serverId).toBe(id);
      expect(await serversHolding(where!.database)).toEqual([id]);
      for (const other of SERVERS)
        expect((await onServer(other, 'select 1 from pg_roles where rolname = $1', [where!.role])).length).toBe(
          other === id ? 1 : 0,
        );
    }
  }, 60_000);

  it.each(SERVERS)(
    'runs every data action on the project of server %s, on that server',
    async (id) => {
      const p = projects.get(id)!;
      const data = dataCall(call, p.apiKey);
      const vector = pgvector.get(id) === true;
      const created = await data('rawSQL', {
        sql: `create table items (id serial primary key, name text not null, qty int not null${vector ? ', embedding vector(3)' : ''})`,
      });
      expect({ status: created.status, body: created.status === 200 ? undefined : created.body }).toEqual({
        status: 200,
        body: undefined,
      });
      const values = [
        { name: 'a', qty: 1, ...(vector ? { embedding: [1, 0, 0] } : {}) },
        { name: 'b', qty: 2, ...(vector ? { embedding: [0, 1, 0] } : {}) },
        { name: 'c', qty: 3, ...(vector ? { embedding: [0, 0, 1] } : {}) },
      ];
      const inserted = await data('insert', { table: 'items', values });
      expect({ status: inserted.status, n: inserted.body.rows?.length }).toEqual({ status: 201, n: 3 });
      expect((await data('find', { table: 'items', select: ['name'], orderBy: 'id' })).body.rows).toEqual([
        { name: 'a' },
        { name: 'b' },
        { name: 'c' },
      ]);
      expect((await data('findOne', { table: 'items', select: ['qty'], where: { name: 'b' } })).body.row).toEqual({
        qty: 2,
      });
      expect((await data('update', { table: 'items', where: { name: 'a' }, set: { qty: 10 } })).body.count).toBe(1);
      expect((await data('delete', { table: 'items', where: { name: 'c' } })).body.count).toBe(1);
      expect(
        (await data('aggregate', { table: 'items', aggregates: [{ fn: 'sum', column: 'qty', as: 'total' }] })).body
          .rows[0].total,
      ).toBe(12);
      const tx = await data('transaction', {
        operations: [
          { action: 'insert', table: 'items', values: { name: 'd', qty: 4 } },
          { action: 'update', table: 'items', where: { name: 'd' }, set: { qty: 5 } },
        ],
      });
      expect(tx.status).toBe(200);
      // All or nothing: the second operation fails (no such column), the first is not kept.
      const failed = await data('transaction', {
        operations: [
          { action: 'insert', table: 'items', values: { name: 'e', qty: 6 } },
          { action: 'update', table: 'items', where: { name: 'e' }, set: { nope: 1 } },
        ],
      });
      expect(failed.status).toBeGreaterThanOrEqual(400);
      const raw = await data('rawSQL', { sql: 'select name, qty from items where qty > $1 order by id', params: [1] });
      expect(raw.body.rows).toEqual([
        { name: 'a', qty: 10 },
        { name: 'b', qty: 2 },
        { name: 'd', qty: 5 },
      ]);
      if (vector) {
        const search = () =>
          data('vectorSearch', { table: 'items', column: 'embedding', vector: [0, 0.9, 0.1], k: 1, select: ['name'] });
        const exact = await search();
        expect({ status: exact.status, rows: exact.body.rows?.map((r: { name: string }) => r.name) }).toEqual({
          status: 200,
          rows: ['b'],
        });
        expect(
          (await data('rawSQL', { sql: 'create index on items using hnsw (embedding vector_cosine_ops)' })).status,
        ).toBe(200);
        expect((await search()).body.method).toBe('hnsw');
      }
      // Migrations and the schema, on the same database.
      const migrated = await call('POST', '/v1/migrations', {
        apiKey: p.apiKey,
        body: { version: '20260101000001', name: 'tags', sql: 'create table tags (id serial primary key, tag text);' },
      });
      expect({ status: migrated.status, applied: migrated.body.applied }).toEqual({ status: 200, applied: true });
      const schema = await call('GET', '/v1/schema', { apiKey: p.apiKey });
      expect(schema.body.tables.map((t: { name: string }) => t.name).sort()).toEqual(['items', 'tags']);

      // On the server itself: the rows and the migration are in the project's database there.
      const where = (await projectServer(platform, p.id))!;
      const schemaName = `p_${p.id.replace(/-/g, '')}`;
      expect(await onServer(id, `select name, qty from "${schemaName}".items order by id`, [], where.database)).toEqual(
        [
          { name: 'a', qty: 10 },
          { name: 'b', qty: 2 },
          { name: 'd', qty: 5 },
        ],
      );
      expect(
        (await onServer(id, `select to_regclass('"${schemaName}".tags')::text as t`, [], where.database))[0],
      ).toEqual({ t: `${schemaName}.tags` });
      expect(await serversHolding(where.database)).toEqual([id]);
    },
    60_000,
  );

  it.each(SERVERS)(
    'streams changes of the project of server %s over SSE and graphql-ws',
    async (id) => {
      const p = projects.get(id)!;
      const data = dataCall(call, p.apiKey);
      expect((await data('rawSQL', { sql: 'create table live (id serial primary key, note text)' })).status).toBe(200);
      await publish(call, p, 'live');
      const sse = await sseText(
        platform.url,
        p.apiKey,
        'subscription { dataChanges(table: "live") { operation row } }',
      );
      const ws: Client = wsClient(platform.url, { 'x-api-key': p.apiKey });
      const wsGot: string[] = [];
      const stop = ws.subscribe<{ dataChanges: { row: { note: string } | null } }>(
        { query: 'subscription { dataChanges(table: "live") { operation row } }' },
        {
          next: (v) => void (v.data?.dataChanges.row && wsGot.push(v.data.dataChanges.row.note)),
          error: () => {},
          complete: () => {},
        },
      );
      try {
        let n = 0;
        // A subscription listens a moment after it is opened: write until both have seen a change.
        await waitFor(
          async () => {
            expect((await data('insert', { table: 'live', values: { note: `${id}-${++n}` } })).status).toBe(201);
            return sse.text().includes(`${id}-`) && wsGot.some((x) => x.startsWith(`${id}-`));
          },
          { message: `a change on ${id} over SSE and graphql-ws` },
        );
      } finally {
        stop();
        await ws.dispose();
        await sse.close();
      }
    },
    60_000,
  );

  it.each(SERVERS)(
    "runs an after-write hook's function and a function's Database step on the project of server %s",
    async (id) => {
      const p = projects.get(id)!;
      const data = dataCall(call, p.apiKey);
      const as = { apiKey: p.apiKey };
      expect(
        (
          await data('rawSQL', {
            sql: 'create table orders (id serial primary key, item text); create table audit (id serial primary key, item text, via text)',
          })
        ).status,
      ).toBe(200);
      const audit = (via: string, value: string) => ({
        name: `audit-${via}`,
        steps: [
          {
            name: 'w',
            kind: 'Database',
            query: { action: 'insert', table: 'audit', values: { item: value, via } },
          },
        ],
      });
      expect(
        (await call('POST', `${F}/functions`, { ...as, body: audit('hook', '{{ input.body.row.item }}') })).status,
      ).toBe(201);
      expect(
        (await call('POST', `${F}/functions`, { ...as, body: audit('invoke', '{{ input.body.item }}') })).status,
      ).toBe(201);
      expect(
        (
          await call('POST', `${F}/hooks`, {
            ...as,
            body: { table: 'orders', timing: 'after', events: ['insert'], function: 'audit-hook' },
          })
        ).status,
      ).toBe(201);
      expect((await data('insert', { table: 'orders', values: { item: `hooked-${id}` } })).status).toBe(201);
      const invoked = await call('POST', `${F}/invoke/audit-invoke`, { ...as, body: { item: `invoked-${id}` } });
      expect(invoked.status).toBe(200);
      await waitFor(async () => (await data('find', { table: 'audit', select: ['via'] })).body.rows.length === 2, {
        message: `the hook's write on ${id}`,
      });
      const where = (await projectServer(platform, p.id))!;
      expect(
        await onServer(
          id,
          `select item, via from "p_${p.id.replace(/-/g, '')}".audit order by via`,
          [],
          where.database,
        ),
      ).toEqual([
        { item: `hooked-${id}`, via: 'hook' },
        { item: `invoked-${id}`, via: 'invoke' },
      ]);
    },
    60_000,
  );

  it.each(SERVERS)(
    'counts the usage of the project of server %s in its database there',
    async (id) => {
      const p = projects.get(id)!;
      const data = dataCall(call, p.apiKey);
      expect((await data('rawSQL', { sql: 'create table counted (id int primary key)' })).status).toBe(200);
      expect(
        (await data('insert', { table: 'counted', values: Array.from({ length: 40 }, (_, i) => ({ id: i })) })).status,
      ).toBe(201);
      const where = (await projectServer(platform, p.id))!;
      const live = async () =>
        Number(
          (
            await onServer<{ n: string }>(
              id,
              'select coalesce(sum(n_live_tup), 0) as n from pg_stat_user_tables',
              [],
              where.database,
            )
          )[0]!.n,
        );
      // The statistics of the project's database on its server (about a second behind): the usage says the same.
      await waitFor(
        async () => {
          const usage = await call('GET', '/v1/usage', { apiKey: p.apiKey });
          expect(usage.status).toBe(200);
          return usage.body.usage.rows >= 40 && usage.body.usage.rows === (await live()) && usage.body.usage.bytes > 0;
        },
        { message: `the usage of the project on ${id}` },
      );
    },
    60_000,
  );

  it.each(SERVERS)(
    'drops the database and roles of a deleted project of server %s on that server',
    async (id) => {
      const p = await projectOn(id, `deleted on ${id}`, await signIn(call));
      const where = (await projectServer(platform, p.id))!;
      expect(where.serverId).toBe(id);
      expect(await serversHolding(where.database)).toEqual([id]);
      expect((await call('DELETE', `/auth/api/v1/projects/${p.id}`, { token: p.token })).status).toBe(204);
      await waitFor(
        async () =>
          (
            await onServer(
              id,
              'select 1 from pg_database where datname = $1 union all select 1 from pg_roles where rolname = $2',
              [where.database, where.role],
            )
          ).length === 0,
        { message: `the database and role dropped on ${id}` },
      );
      expect(await projectServer(platform, p.id)).toBeUndefined();
      await placeOn(platform, 'default');
    },
    60_000,
  );

  it("answers 503 for a project of a hung server (it takes connections and never answers), and the other servers' projects keep working meanwhile", async () => {
    // A project of pg-b whose database the project.created event made: this process has no connection of it yet.
    await placeOn(platform, 'pg-b');
    const p = await createProject(call, await signIn(call), 'hung');
    await waitFor(async () => (await projectServer(platform, p.id))?.serverId === 'pg-b', {
      message: 'the project provisioned on pg-b',
    });
    await placeOn(platform, 'default');
    const postmaster = postmasterOf(extra[1]!.port);
    paused = postmaster;
    process.kill(postmaster, 'SIGSTOP'); // the kernel still accepts connections; nobody answers them
    // A realtime subscriber of the project: its listener cannot log in either.
    const ws: Client = wsClient(platform.url, { 'x-api-key': p.apiKey });
    try {
      const subscribed = new Promise<unknown>((resolve) => {
        ws.subscribe(
          { query: 'subscription { dataChanges { table operation } }' },
          { next: resolve, error: resolve, complete: () => resolve('complete') },
        );
      });
      const hung = dataCall(call, p.apiKey)('rawSQL', { sql: 'select 1 as one' });
      // Meanwhile the other servers' projects answer.
      for (const id of ['default', 'pg-a'] as const)
        expect((await dataCall(call, projects.get(id)!.apiKey)('rawSQL', { sql: 'select 1 as one' })).status).toBe(200);
      const res = await hung;
      expect({ status: res.status, code: res.body?.error?.code, retry: res.headers.get('retry-after') }).toEqual({
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        retry: expect.stringMatching(/^\d+$/),
      });
      expect(JSON.stringify(await subscribed)).toMatch(/SERVICE_UNAVAILABLE|could not listen/);
    } finally {
      process.kill(postmaster, 'SIGCONT');
      paused = undefined;
      await ws.dispose();
    }
    await waitFor(async () => (await dataCall(call, p.apiKey)('rawSQL', { sql: 'select 1 as one' })).status === 200, {
      message: 'the project answering once its server does',
    });
  }, 60_000);

  it("sweeps the after-hook outbox of other servers' projects past an unreachable server, trying that server once per sweep", async () => {
    // Five projects of pg-b, then pg-b's URL pointed at a port that takes connections and never answers (counted).
    await placeOn(platform, 'pg-b');
    // Two tenants: the free plan allows three projects each.
    const tenants = [await signIn(call), await signIn(call)];
    const stuck: DataProject[] = [];
    for (let i = 0; i < 5; i++) stuck.push(await projectOn('pg-b', `unreachable ${i}`, tenants[i % 2]!));
    await placeOn(platform, 'default');
    let attempts = 0;
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      attempts++;
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = new URL(extra[1]!.url);
    silentUrl.port = String((silent.address() as net.AddressInfo).port);
    // A project of pg-a with an after-hook on `swept`, and a row in its outbox the sweeper must hand off.
    const healthy = projects.get('pg-a')!;
    const as = { apiKey: healthy.apiKey };
    const data = dataCall(call, healthy.apiKey);
    expect(
      (
        await data('rawSQL', {
          sql: 'create table swept (id serial primary key, item text); create table swept_audit (id serial primary key, item text)',
        })
      ).status,
    ).toBe(200);
    const fn = {
      name: 'swept-audit',
      steps: [
        {
          name: 'w',
          kind: 'Database',
          query: { action: 'insert', table: 'swept_audit', values: { item: '{{ input.body.row.item }}' } },
        },
      ],
    };
    expect((await call('POST', `${F}/functions`, { ...as, body: fn })).status).toBe(201);
    expect(
      (
        await call('POST', `${F}/hooks`, {
          ...as,
          body: { table: 'swept', timing: 'after', events: ['insert'], function: 'swept-audit' },
        })
      ).status,
    ).toBe(201);
    const platformDatabase = new URL(platform.databaseUrl).pathname.slice(1);
    try {
      // Markers left by earlier tests' writes (their outboxes are empty) would send sweeps to pg-b too.
      await onServer('default', 'delete from data_hook_outbox_projects', [], platformDatabase);
      await setServerUrl(platform, 'pg-b', silentUrl.toString());
      // The data process follows the new URL: a pg-b project's call now waits on the silent port and answers 503.
      await waitFor(
        async () => (await dataCall(call, stuck[0]!.apiKey)('rawSQL', { sql: 'select 1' })).status === 503,
        { message: "pg-b's projects unreachable", timeoutMs: 30_000, intervalMs: 1_000 },
      );
      // The outbox: the three pg-b projects marked first, the healthy one after them.
      const where = (await projectServer(platform, healthy.id))!;
      await onServer(
        'pg-a',
        `insert into tessera_hooks.outbox (payload, created_at) values ($1::jsonb, now() - interval '1 minute')`,
        [
          JSON.stringify({
            userId: null,
            depth: 1,
            writes: [{ table: 'swept', event: 'insert', rows: [{ item: 'swept' }] }],
          }),
        ],
        where.database,
      );
      attempts = 0;
      await onServer(
        'default',
        `insert into data_hook_outbox_projects (project_id, touched_at, next_attempt_at)
         select id::uuid, now() - interval '1 minute', now() - make_interval(secs => 60 + n)
           from unnest($1::text[]) with ordinality as t(id, n)`,
        [[...stuck.map((p) => p.id), healthy.id].reverse()],
        platformDatabase,
      );
      // The sweep that hands the healthy project's row off deletes it in the same transaction: by then it has tried
      // the unreachable server once, and passed over its other projects (the next sweep comes seconds later).
      await waitFor(
        async () =>
          (
            await onServer<{ n: number }>(
              'pg-a',
              'select count(*)::int as n from tessera_hooks.outbox',
              [],
              where.database,
            )
          )[0]!.n === 0,
        { message: "the healthy project's outbox row handed off", timeoutMs: 60_000, intervalMs: 100 },
      );
      // Tried per project, the sweep would have made five attempts (50 s of login timeouts) before the healthy row.
      // Once per sweep makes one; the port also counts what else reaches pg-b meanwhile (another sweep starting before
      // this poll saw the hand-off, the usage measurement), so the bound is "fewer than one per stuck project".
      expect(attempts).toBeGreaterThanOrEqual(1);
      expect(attempts).toBeLessThan(stuck.length);
      await waitFor(
        async () => {
          const found = await data('find', { table: 'swept_audit', select: ['item'] });
          expect({ status: found.status, body: found.status === 200 ? undefined : found.body }).toEqual({
            status: 200,
            body: undefined,
          });
          return found.body.rows.length === 1;
        },
        // Polled gently: the project's plan counts requests per minute.
        { message: "the healthy project's after-hook run", timeoutMs: 30_000, intervalMs: 1_000 },
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      await setServerUrl(platform, 'pg-b', extra[1]!.url);
    }
  }, 120_000);

  it("answers 503 for the projects of a stopped server, and the other servers' projects keep working", async () => {
    for (const id of SERVERS)
      expect(
        (await dataCall(call, projects.get(id)!.apiKey)('rawSQL', { sql: 'create table kept (id int primary key)' }))
          .status,
      ).toBe(200);
    await extra[1]!.stop(); // pg-b
    const down = dataCall(call, projects.get('pg-b')!.apiKey);
    for (const body of [{ table: 'kept' }, { table: 'kept', where: { id: 1 } }]) {
      const res = await down('find', body);
      expect({ status: res.status, code: res.body?.error?.code, retry: res.headers.get('retry-after') }).toEqual({
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        retry: expect.stringMatching(/^\d+$/),
      });
      expect(res.body.error).toEqual(
        expect.objectContaining({ message: expect.any(String), request_id: expect.any(String) }),
      );
    }
    expect((await down('insert', { table: 'kept', values: { id: 1 } })).status).toBe(503);
    for (const id of ['default', 'pg-a'] as const) {
      const data = dataCall(call, projects.get(id)!.apiKey);
      expect((await data('insert', { table: 'kept', values: { id: 7 } })).status).toBe(201);
      expect((await data('find', { table: 'kept' })).body.rows).toEqual([{ id: 7 }]);
    }
  }, 60_000);
});
