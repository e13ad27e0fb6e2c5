// After-hooks run at least once, end to end: a write with after-hooks adds a row to the outbox in its project's
// own database, in its own transaction, and deletes it once handed to the functions subgraph; when the hand-off
// fails (the functions subgraph unreachable: here its `_enqueueAfterHooks` calls fail) or never happens (a process
// that died after the commit: here a row left in the outbox by hand), the sweeper hands it off later and the
// after-hook runs. Writes without after-hooks, dry runs and rolled-back transactions add nothing; end users' writes
// and transactions still reach their after-hooks; a project's outbox is in its own database, out of rawSQL's reach,
// and its role can reach neither another project's database nor the platform's.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createPgPool } from '../../../platform/pg-pool.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { RequestContext } from '../../../platform/auth.ts';
import { startOneProcess, TEST_SECRET, type TestPlatform } from '../../support/platform.ts';
import { createSecretBox } from '../../../platform/crypto.ts';
import { publishBroadcastNow } from '../../../platform/broadcast.ts';
import { client, type Res } from '../../support/http.ts';
import { dropLeftoverRoles } from '../data/data-support.ts';
import { newProject, passwordGrant, registerUser, type Project } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';
type Row = Record<string, unknown>;
type OutboxRow = {
  id: string;
  project_id: string;
  payload: { userId: string | null; depth: number; writes: { table: string; event: string; rows: Row[] }[] };
  attempts: number;
  last_error: string | null;
};

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let admin: pg.Pool;
/** Main's own database, as main's own role (what the data API's connections are). */
let mainDb: pg.Client;
let main: Project;
let other: Project;
let userToken: string;
let userId: string;

const data = (
  action: string,
  body: unknown,
  creds: { apiKey?: string; token?: string } = { apiKey: main.apiKey },
): Promise<Res> => call('POST', `/v1/${action}`, { ...creds, body });
const sql = async (text: string, apiKey = main.apiKey): Promise<Row[]> => {
  const res = await data('rawSQL', { sql: text }, { apiKey });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
  return res.body.rows as Row[];
};
const post = async (path: string, body: unknown) => {
  const res = await call('POST', `${F}${path}`, { apiKey: main.apiKey, body });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 201, error: undefined });
  return res.body;
};
const outbox = async (): Promise<OutboxRow[]> =>
  (
    await mainDb.query<OutboxRow>(
      'select id::text as id, payload, attempts, last_error from tessera_hooks.outbox order by id',
    )
  ).rows;
/** How many outbox rows were ever added (the id sequence: a row added and deleted still counts). */
const added = async (): Promise<number> => {
  const { rows } = await mainDb.query<{ n: string }>(
    'select case when is_called then last_value else 0 end as n from tessera_hooks.outbox_id_seq',
  );
  return Number(rows[0]!.n);
};
/** Ages main's outbox rows and its mark past the sweeper's grace, and makes them due now. */
const ageOutbox = async (): Promise<void> => {
  await mainDb.query(
    `update tessera_hooks.outbox set created_at = now() - interval '1 minute', next_attempt_at = now()`,
  );
  await admin.query(
    `update data_hook_outbox_projects set touched_at = now() - interval '2 minutes', next_attempt_at = now() where project_id = $1`,
    [main.id],
  );
};
const roles = async (projectId: string) =>
  (
    await admin.query<{ role_name: string; user_role_name: string; password_sealed: string; database_name: string }>(
      'select role_name, user_role_name, password_sealed, database_name from data_project_roles where project_id = $1',
      [projectId],
    )
  ).rows[0]!;
/** A connection logged in as a project's own login role with its password, as the data API's connections are (to `database`, by default its own). */
const loginAs = async (
  role: { role_name: string; password_sealed: string; database_name: string },
  database = role.database_name,
): Promise<pg.Client> => {
  const url = new URL(platform.tessera!.config.databaseUrl!);
  url.username = role.role_name;
  url.password = createSecretBox(TEST_SECRET, 'data:project-roles').decrypt(role.password_sealed);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  return c;
};
const audits = async (sku: string): Promise<Row[] | undefined> => {
  const rows = (await data('find', { table: 'audit', where: { sku }, select: ['order_id', 'event', 'sku', 'user_id'] }))
    .body.rows as Row[];
  return rows.length > 0 ? rows : undefined;
};

/** Makes the functions subgraph unreachable for the data subgraph's hand-offs while `fn` runs. */
async function withHandOffFailing<T>(fn: () => Promise<T>): Promise<T> {
  const router = platform.tessera!.router;
  const real = router.run;
  router.run = async (query: string, variables: Record<string, unknown>, ctx: RequestContext) => {
    if (query.includes('_enqueueAfterHooks')) throw new Error('connect ECONNREFUSED (the functions subgraph is down)');
    return await real(query, variables, ctx);
  };
  try {
    return await fn();
  } finally {
    router.run = real;
  }
}

beforeAll(async () => {
  platform = await startOneProcess();
  call = client(platform.url);
  admin = createPgPool(
    { connectionString: platform.tessera!.config.databaseUrl, max: 2 },
    createLogger('warn'),
    'test admin',
  );
  main = await newProject(platform.url);
  other = await newProject(platform.url);
  for (const p of [main, other])
    await waitFor(async () => (await data('rawSQL', { sql: 'select 1 as one' }, { apiKey: p.apiKey })).status === 200, {
      message: 'project schema',
    });
  mainDb = await loginAs(await roles(main.id));
  await sql('create table orders (id serial primary key, sku text not null)');
  await sql('create table audit (id serial primary key, order_id int, event text, sku text, user_id text)');
  await sql('create table plain (id serial primary key, sku text)');
  await sql('create table checked (id serial primary key, sku text)');
  await sql(
    "create table notes (id serial primary key, owner text not null default current_setting('request.user_id', true), sku text not null)",
  );
  await sql('alter table notes enable row level security');
  await sql(
    "create policy own on notes using (owner = current_setting('request.user_id', true)) with check (owner = current_setting('request.user_id', true))",
  );
  await post('/functions', {
    name: 'audit',
    steps: [
      {
        name: 'w',
        kind: 'Database',
        query: {
          action: 'insert',
          table: 'audit',
          values: {
            order_id: '{{ input.body.row.id }}',
            event: '{{ input.body.event }}',
            sku: '{{ input.body.row.sku }}',
            user_id: '{{ input.body.user_id }}',
          },
        },
      },
    ],
  });
  await post('/functions', {
    name: 'pass',
    steps: [{ name: 'same', kind: 'Transform', expression: { row: { sku: '{{ input.body.row.sku }}' } } }],
  });
  for (const table of ['orders', 'notes'])
    await post('/hooks', { table, timing: 'after', events: ['insert', 'update', 'delete'], function: 'audit' });
  await post('/hooks', { table: 'checked', timing: 'before', events: ['insert'], function: 'pass' });
  const u = await registerUser(platform.url, main);
  const t = await passwordGrant(platform.url, main, u);
  expect(t.status).toBe(200);
  userToken = t.body.access_token as string;
  userId = u.id;
}, 120_000);

afterAll(async () => {
  await mainDb?.end();
  await admin?.end();
  const url = platform?.tessera?.config.databaseUrl;
  await platform?.close();
  if (url) await dropLeftoverRoles(url);
});

describe('the after-hook outbox', () => {
  it('on the normal path adds one row with the write and deletes it once handed off', async () => {
    const before = await added();
    const made = await data('insert', { table: 'orders', values: { sku: 'normal' }, returning: ['id'] });
    expect(made.status).toBe(201);
    expect(await added()).toBe(before + 1);
    expect(await outbox()).toEqual([]); // deleted before the answer
    expect(await waitFor(() => audits('normal'))).toEqual([
      { order_id: made.body.rows[0].id, event: 'insert', sku: 'normal', user_id: null },
    ]);
    // Update and delete too; an update matching nothing hands off nothing and adds nothing.
    const n = await added();
    expect((await data('update', { table: 'orders', where: { sku: 'nothing' }, set: { sku: 'x' } })).body.count).toBe(
      0,
    );
    expect(await added()).toBe(n);
    expect((await data('delete', { table: 'orders', where: { sku: 'normal' } })).body.count).toBe(1);
    expect(await added()).toBe(n + 1);
    expect(await waitFor(async () => (await audits('normal'))?.filter((r) => r.event === 'delete')[0])).toMatchObject({
      event: 'delete',
    });
    expect(await outbox()).toEqual([]);
  });

  it('adds nothing for tables without after-hooks (none, or before-hooks only), dry runs and rolled-back transactions', async () => {
    const before = await added();
    expect((await data('insert', { table: 'plain', values: { sku: 'p' } })).status).toBe(201);
    expect((await data('update', { table: 'plain', where: { sku: 'p' }, set: { sku: 'q' } })).body.count).toBe(1);
    expect((await data('insert', { table: 'checked', values: { sku: 'c' } })).status).toBe(201);
    expect(
      (
        await data('transaction', {
          operations: [
            { action: 'insert', table: 'plain', values: { sku: 'r' } },
            { action: 'delete', table: 'plain', where: { sku: 'r' } },
          ],
        })
      ).status,
    ).toBe(200);
    // A transaction refused part way rolls back its after-hooked write and its outbox row with it.
    const refused = await data('transaction', {
      operations: [
        { action: 'insert', table: 'orders', values: { sku: 'rolled-back' } },
        { action: 'insert', table: 'orders', values: { sku: null } },
      ],
    });
    expect(refused.status).toBe(400);
    // A function's dry run rolls back: its write to a table with after-hooks adds no row and hands nothing off.
    await post('/functions', {
      name: 'place',
      steps: [
        {
          name: 'save',
          kind: 'Database',
          query: { action: 'insert', table: 'orders', values: { sku: '{{ input.body.sku }}' } },
        },
      ],
    });
    const dry = await call('POST', `${F}/invoke/place?dry_run=true`, { apiKey: main.apiKey, body: { sku: 'dry' } });
    expect(dry.body).toMatchObject({ dry_run: true, status: 'succeeded' });
    expect(await added()).toBe(before);
    expect(await outbox()).toEqual([]);
    // A real write after them reaches its after-hook: theirs, handed off first, would have by then.
    expect((await data('insert', { table: 'orders', values: { sku: 'after-dry' } })).status).toBe(201);
    await waitFor(() => audits('after-dry'), { message: 'the audit of the write after the dry run' });
    expect(await audits('dry')).toBeUndefined();
    expect(await audits('rolled-back')).toBeUndefined();
  });

  it("an end user's write and a transaction's writes reach their after-hooks through the outbox (one row per transaction)", async () => {
    const before = await added();
    const mine = await data('insert', { table: 'notes', values: { sku: 'by-user' } }, { token: userToken });
    expect(mine.status).toBe(201);
    expect(await waitFor(() => audits('by-user'))).toEqual([
      { order_id: mine.body.rows[0].id, event: 'insert', sku: 'by-user', user_id: userId },
    ]);
    const tx = await data('transaction', {
      operations: [
        { action: 'insert', table: 'orders', values: [{ sku: 'tx-a' }, { sku: 'tx-b' }] },
        { action: 'update', table: 'orders', where: { sku: 'tx-a' }, set: { sku: 'tx-a2' } },
        { action: 'insert', table: 'plain', values: { sku: 'tx-plain' } },
      ],
    });
    expect(tx.status).toBe(200);
    expect(
      await waitFor(async () =>
        (await audits('tx-b')) && (await audits('tx-a')) && (await audits('tx-a2')) ? true : undefined,
      ),
    ).toBe(true);
    expect(await added()).toBe(before + 2);
    expect(await outbox()).toEqual([]);
  });

  it('when the hand-off fails, the write still succeeds, its row stays, and the sweeper runs the after-hook later', async () => {
    const made = await withHandOffFailing(async () => {
      const res = await data('insert', { table: 'orders', values: { sku: 'unreachable' } });
      expect(res.status).toBe(201); // committed: the caller is not told the hooks' service is down
      return res;
    });
    const id = made.body.rows[0].id as number;
    const [row] = await outbox();
    expect(row).toMatchObject({
      attempts: 0,
      payload: {
        userId: null,
        depth: 1,
        writes: [{ table: 'orders', event: 'insert', rows: [{ id, sku: 'unreachable' }] }],
      },
    });
    expect(await audits('unreachable')).toBeUndefined();
    // Still unreachable when the sweeper comes (the row is made old enough for it): it is kept, with its error.
    await withHandOffFailing(async () => {
      await ageOutbox();
      const failed = await waitFor(async () => (await outbox()).find((r) => r.attempts === 1), { timeoutMs: 25_000 });
      expect(failed.last_error).toMatch(/could not be reached/);
    });
    // Back: the next attempt (made due now rather than in 10 s) hands it off, the audit row appears, the row is gone.
    await ageOutbox();
    expect(await waitFor(() => audits('unreachable'), { timeoutMs: 25_000 })).toEqual([
      { order_id: id, event: 'insert', sku: 'unreachable', user_id: null },
    ]);
    await waitFor(async () => ((await outbox()).length === 0 ? true : undefined));
  }, 75_000);

  it('a row left by a process that died after its commit is handed off by the sweeper', async () => {
    const [order] = await sql("insert into orders (sku) values ('crashed') returning id, sku");
    await mainDb.query(
      `insert into tessera_hooks.outbox (payload, created_at) values ($1::jsonb, now() - interval '20 seconds')`,
      [JSON.stringify({ userId, depth: 1, writes: [{ table: 'orders', event: 'insert', rows: [order] }] })],
    );
    // Its write had marked the project just before committing, long enough ago for the sweeper.
    await admin.query(
      `insert into data_hook_outbox_projects (project_id, touched_at) values ($1, now() - interval '20 seconds')
      on conflict (project_id) do update set touched_at = excluded.touched_at, next_attempt_at = now()`,
      [main.id],
    );
    expect(await waitFor(() => audits('crashed'), { timeoutMs: 25_000 })).toEqual([
      { order_id: order!.id, event: 'insert', sku: 'crashed', user_id: userId },
    ]);
    await waitFor(async () => ((await outbox()).length === 0 ? true : undefined));
  }, 45_000);
});

describe('while the functions subgraph cannot be asked at all', () => {
  it('writes go by the last hooks known: tables without hooks and with after-hooks only are served, before-hooks wait (503)', async () => {
    const router = platform.tessera!.router;
    const real = router.run;
    // Every earlier write asked for main's hooks; `other` never had a write.
    expect(await sql('create table lonely (id serial primary key)', other.apiKey)).toEqual([]);
    router.run = async (query: string, variables: Record<string, unknown>, ctx: RequestContext) => {
      if (/_hookTriggers|_enqueueAfterHooks|_runBeforeHooks/.test(query))
        throw new Error('connect ECONNREFUSED (the functions subgraph is down)');
      return await real(query, variables, ctx);
    };
    try {
      // What this process remembered goes (as after a lost broadcast connection): it must ask again, and cannot.
      await publishBroadcastNow(admin, 'hooks.changed', { projectId: main.id });
      await waitFor(
        async () => (await data('insert', { table: 'plain', values: { sku: 'while-down' } })).status === 201,
        { message: 'a write to a table without hooks' },
      );
      expect((await data('insert', { table: 'orders', values: { sku: 'down-after' } })).status).toBe(201);
      expect((await data('insert', { table: 'checked', values: { sku: 'down-before' } })).status).toBe(503);
      expect((await data('insert', { table: 'lonely', values: {} }, { apiKey: other.apiKey })).status).toBe(503);
    } finally {
      router.run = real;
    }
    await ageOutbox();
    expect(await waitFor(() => audits('down-after'), { timeoutMs: 25_000 })).toMatchObject([
      { event: 'insert', sku: 'down-after' },
    ]);
    expect((await data('insert', { table: 'lonely', values: {} }, { apiKey: other.apiKey })).status).toBe(201);
  }, 60_000);
});

describe('a project and the outbox', () => {
  it("rawSQL cannot reach the outbox (a schema of the platform's, not the project's)", async () => {
    for (const text of [
      'select * from tessera_hooks.outbox',
      "insert into tessera_hooks.outbox (payload) values ('{}')",
      'select * from data_hook_outbox_projects',
    ]) {
      const res = await data('rawSQL', { sql: text });
      expect({ text, status: res.status }).toEqual({ text, status: text.includes('tessera_hooks') ? 403 : 404 });
    }
    const fn = await data('rawSQL', {
      sql: `create function sneak() returns bigint language sql as $$ select count(*) from tessera_hooks.outbox $$`,
    });
    expect(fn.status).toBe(403);
    expect(await outbox()).toEqual([]);
  });

  it("the project's own role reaches its own database's outbox only: not another project's database, nor the platform's", async () => {
    const mine = await roles(main.id);
    const theirs = await roles(other.id);
    await expect(loginAs(mine, theirs.database_name)).rejects.toMatchObject({ code: '42501' });
    await expect(loginAs(mine, new URL(platform.tessera!.config.databaseUrl!).pathname.slice(1))).rejects.toMatchObject(
      { code: '42501' },
    );
    // Rows it writes into its own outbox can only ever run its own project's after-hooks.
    const d = await loginAs(theirs);
    try {
      expect((await d.query('select count(*)::int as n from tessera_hooks.outbox')).rows[0].n).toBe(0);
    } finally {
      await d.end();
    }
  });
});
