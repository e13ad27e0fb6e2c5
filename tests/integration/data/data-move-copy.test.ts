// The copy engine of online moves (subgraphs/data/services/move-copy.ts) between two real PostgreSQL 15 servers
// (tests/support/pg-servers.ts): a project database made the way provisioning makes one, written to all along the
// copy, is copied whole (schema, grants, RLS, triggers, rows, sequences, after-hook outbox) with logical replication or
// with pg_dump/pg_restore; a tampered copy, an abort at any phase and too old a pg_dump are refused, leaving the source
// as it was and nothing of the move behind.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { AppError } from '../../../platform/errors.ts';
import {
  cleanupLeftovers,
  copyProjectDatabase,
  findPgTools,
  moveObjectNames,
  type MovePhase,
  type MoveProgress,
} from '../../../subgraphs/data/services/move-copy.ts';
import { TEMPLATE_SQL } from '../../../subgraphs/data/services/provisioning.ts';
import { startPgServers, type TestPgServer } from '../../support/pg-servers.ts';

const PLATFORM = { name: 'tessera_platform', password: crypto.randomBytes(12).toString('hex') };
const TEMPLATE = 'tst_move_v1';

let source: TestPgServer;
let target: TestPgServer;

async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<pg.QueryResult<T>> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {});
  await c.connect();
  try {
    return await c.query<T>(text, params);
  } finally {
    await c.end();
  }
}

/** The platform role (not a superuser: CREATEDB, CREATEROLE, REPLICATION) and the project template, as provisioning makes it. */
async function prepareServer(s: TestPgServer): Promise<void> {
  await sql(
    s.url,
    `create role ${PLATFORM.name} login createdb createrole replication password '${PLATFORM.password}'`,
  );
  const platform = s.urlOf('postgres', PLATFORM);
  await sql(platform, `create database ${TEMPLATE} template template1`);
  const c = new pg.Client({ connectionString: s.urlOf(TEMPLATE, PLATFORM) });
  await c.connect();
  for (const q of TEMPLATE_SQL) await c.query(q);
  await c.end();
}

type Project = {
  db: string;
  schema: string;
  role: { name: string; password: string };
  userRole: string;
  anonRole: string;
  /** The project's database on `s` as the platform role (or the superuser). */
  platformUrl: (s: TestPgServer, superuser?: boolean) => string;
  /** The project's database on the source as the project's own login role. */
  projectUrl: string;
};

/** Roles and an empty database on both servers; the project's schema only on the source (provisioning.ts's steps). */
async function makeProject(): Promise<Project> {
  const h = crypto.randomBytes(6).toString('hex');
  const p = {
    db: `tsp_move_${h}`,
    schema: `p_${h}`,
    role: { name: `tsr_move_${h}`, password: crypto.randomBytes(12).toString('hex') },
    userRole: `tsr_move_${h}_u`,
    anonRole: `tsr_move_${h}_a`,
  };
  for (const s of [source, target]) {
    const platform = s.urlOf('postgres', PLATFORM);
    await sql(
      platform,
      [
        `create role ${p.role.name} login noinherit nosuperuser nocreatedb nocreaterole noreplication nobypassrls password '${p.role.password}'`,
        `create role ${p.userRole} nologin`,
        `create role ${p.anonRole} nologin`,
        `grant ${p.role.name}, ${p.userRole}, ${p.anonRole} to current_user`,
        `grant ${p.userRole}, ${p.anonRole} to ${p.role.name}`,
      ].join('; '),
    );
    await sql(platform, `create database ${p.db} template ${TEMPLATE}`);
    await sql(
      platform,
      [
        `revoke connect, temporary on database ${p.db} from public`,
        `grant connect on database ${p.db} to ${p.role.name}`,
        `alter role ${p.role.name} in database ${p.db} set search_path = ${p.schema}, extensions`,
      ].join('; '),
    );
  }
  const grants = (to: string) => [
    `grant usage on schema ${p.schema} to ${to}`,
    `alter default privileges for role ${p.role.name} in schema ${p.schema} grant select, insert, update, delete on tables to ${to}`,
    `alter default privileges for role ${p.role.name} in schema ${p.schema} grant usage, select on sequences to ${to}`,
  ];
  await sql(
    source.urlOf(p.db, PLATFORM),
    [`create schema ${p.schema} authorization ${p.role.name}`, ...grants(p.userRole), ...grants(p.anonRole)].join('; '),
  );
  const project: Project = {
    ...p,
    platformUrl: (s, superuser) => (superuser ? s.urlOf(p.db) : s.urlOf(p.db, PLATFORM)),
    projectUrl: source.urlOf(p.db, p.role),
  };
  // The project's own tables, as the project makes them (its login role, rawSQL).
  await sql(
    project.projectUrl,
    [
      `create table items (id bigint generated always as identity primary key, name text not null, payload jsonb,
         created_at timestamptz not null default now())`,
      'create table counters (id serial primary key, n bigint not null default 0)',
      'create table numbers (k bigint primary key, v numeric, tags text[])',
      'create view item_names as select id, name from items',
      'alter table items enable row level security',
      `create policy items_read on items for select to ${p.userRole}, ${p.anonRole} using (name not like 'secret%')`,
      `create policy items_write on items for insert to ${p.userRole} with check (true)`,
      `create trigger items_realtime after insert or update or delete on items for each row execute function tessera_realtime.notify_change()`,
      `revoke delete on numbers from ${p.anonRole}`,
      `insert into items (name, payload) select 'item ' || g, jsonb_build_object('g', g, 'nested', jsonb_build_array(g, 'x')) from generate_series(1, 2000) g`,
      'insert into counters (n) values (0), (100)',
      `insert into numbers select g, g * 1.5, array['a' || g, 'b'] from generate_series(1, 3000) g`,
      `insert into tessera_hooks.outbox (payload) values ('{"userId": null, "depth": 1, "writes": []}')`,
    ].join('; '),
  );
  return project;
}

/** Writes to the source as the project until `stop()`: every acknowledged insert, delete and counter increment. */
function writeLoad(p: Project) {
  const pool = new pg.Pool({ connectionString: p.projectUrl, max: 3 });
  pool.on('error', () => {});
  const inserted = new Set<string>();
  const deleted = new Set<string>();
  let increments = 0;
  let stopped = false;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !stopped; i++) {
      const { rows } = await pool.query<{ id: string }>(
        'insert into items (name, payload) values ($1, $2) returning id::text',
        [`load ${w}-${i}`, { w, i }],
      );
      inserted.add(rows[0]!.id);
      if (i % 5 === 4) {
        const victim = rows[0]!.id;
        await pool.query('delete from items where id = $1', [victim]);
        deleted.add(victim);
      }
      await pool.query('update counters set n = n + 1 where id = 1');
      increments++;
    }
  };
  let error: unknown;
  const running = Promise.all(
    [0, 1].map((w) =>
      worker(w).catch((err: unknown) => {
        error ??= err;
        stopped = true;
      }),
    ),
  );
  let ended: Promise<void> | undefined;
  return {
    inserted,
    deleted,
    get increments() {
      return increments;
    },
    /** The first failed write (none may fail while the copy runs). */
    get error() {
      return error;
    },
    /** Stops writing; resolves once no write is in flight (what a hold promises). Idempotent. */
    stop: (): Promise<void> =>
      (ended ??= (async () => {
        stopped = true;
        await running;
        await pool.end();
      })()),
  };
}

/** What a move may leave behind: publications and slots on the source, subscriptions on the target. */
async function leftovers(p: Project): Promise<{ publications: number; slots: number; subscriptions: number }> {
  const pubs = await sql(p.platformUrl(source, true), 'select 1 from pg_publication');
  const slots = await sql(source.url, 'select 1 from pg_replication_slots where database = $1', [p.db]);
  const subs = await sql(target.url, 'select 1 from pg_subscription');
  return { publications: pubs.rowCount!, slots: slots.rowCount!, subscriptions: subs.rowCount! };
}

/** Every table's rows of the source, in order (to see that a failed move left it as it was). */
async function snapshot(p: Project): Promise<string> {
  const { rows } = await sql<{ s: string }>(
    p.platformUrl(source, true),
    `select string_agg(t, '|' order by t) as s from (
       select 'items:' || string_agg(i::text, ',' order by id) as t from ${p.schema}.items i
       union all select 'counters:' || string_agg(c::text, ',' order by id) from ${p.schema}.counters c
       union all select 'numbers:' || count(*) || ':' || sum(k) from ${p.schema}.numbers
       union all select 'outbox:' || count(*) from tessera_hooks.outbox) x`,
  );
  return rows[0]!.s;
}

/** The target has every acknowledged row, the counter's every increment, and the project's schema as on the source. */
async function expectCompleteCopy(p: Project, load: ReturnType<typeof writeLoad>): Promise<void> {
  const t = p.platformUrl(target, true);
  expect(load.error).toBeUndefined();
  const ids = new Set((await sql<{ id: string }>(t, `select id::text from ${p.schema}.items`)).rows.map((r) => r.id));
  const missing = [...load.inserted].filter((id) => !load.deleted.has(id) && !ids.has(id));
  const resurrected = [...load.deleted].filter((id) => ids.has(id));
  expect({ missing, resurrected }).toEqual({ missing: [], resurrected: [] });
  expect(load.inserted.size).toBeGreaterThan(0);
  const n = (await sql<{ n: string }>(t, `select n::text from ${p.schema}.counters where id = 1`)).rows[0]!.n;
  expect(Number(n)).toBe(load.increments);
  // Sequences came along: the next identity on the target follows the source's last one.
  const maxSource = Math.max(...[...load.inserted].map(Number), 2000);
  const next = await sql<{ id: string }>(
    target.urlOf(p.db, p.role),
    `insert into items (name) values ('after the move') returning id::text`,
  );
  expect(Number(next.rows[0]!.id)).toBeGreaterThan(maxSource);
  // Ownership, grants, row level security, the realtime trigger and the view, as on the source.
  const shape = async (url: string) =>
    (
      await sql(
        url,
        `select
           (select string_agg(tablename || ':' || tableowner, ',' order by tablename) from pg_tables where schemaname = $1) as owners,
           (select string_agg(policyname || ':' || roles::text || ':' || coalesce(qual, ''), ',' order by policyname) from pg_policies where schemaname = $1) as policies,
           (select string_agg(c.relname || ':' || c.relrowsecurity, ',' order by c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind = 'r') as rls,
           (select string_agg(tgname, ',' order by tgname) from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and not tgisinternal) as triggers,
           (select string_agg(table_name || ':' || grantee || ':' || privilege_type, ',' order by table_name, grantee, privilege_type) from information_schema.role_table_grants where table_schema = $1) as grants,
           (select string_agg(defaclrole::regrole::text || ':' || defaclobjtype::text || ':' || array_to_string(defaclacl, ' '), ',' order by defaclobjtype, defaclacl::text) from pg_default_acl d join pg_namespace n on n.oid = d.defaclnamespace where n.nspname = $1) as default_acl,
           (select definition from pg_views where schemaname = $1 and viewname = 'item_names') as view`,
        [p.schema],
      )
    ).rows[0];
  const want = await shape(p.platformUrl(source, true));
  expect(want.triggers).toBe('items_realtime');
  expect(want.policies).toContain('items_read');
  expect(await shape(t)).toEqual(want);
  // The outbox rows came too.
  expect((await sql(t, 'select 1 from tessera_hooks.outbox')).rowCount).toBe(1);
  // A project role reads its copy under the same policy: the end-user role sees no 'secret' rows.
  await sql(p.platformUrl(target, true), `insert into ${p.schema}.items (name) values ('secret one')`);
  const seen = await sql(
    target.urlOf(p.db, p.role),
    `set role ${p.userRole}; select count(*)::int as n from items where name like 'secret%'`,
  );
  expect((seen as unknown as pg.QueryResult[])[1]!.rows[0].n).toBe(0);
}

beforeAll(async () => {
  [source, target] = await startPgServers(2);
  await Promise.all([prepareServer(source), prepareServer(target)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
});

describe('copyProjectDatabase', () => {
  it('copies a project with logical replication under a steady write load, losing no acknowledged write', async () => {
    const p = await makeProject();
    const load = writeLoad(p);
    const phases: MoveProgress[] = [];
    const result = await copyProjectDatabase({
      sourceUrl: p.platformUrl(source),
      // PostgreSQL 15 creates subscriptions only as a superuser: the target's platform role is one here.
      targetUrl: p.platformUrl(target, true),
      schemaName: p.schema,
      roleName: p.role.name,
      hold: () => load.stop(),
      onProgress: (x) => phases.push(x),
    }).finally(() => load.stop());
    expect(result).toMatchObject({ mode: 'logical', reason: 'both servers allow logical replication' });
    expect(result.tools.major).toBeGreaterThanOrEqual(15);
    expect(result.tables.map((t) => t.table)).toEqual([
      `${p.schema}.counters`,
      `${p.schema}.items`,
      `${p.schema}.numbers`,
      'tessera_hooks.outbox',
    ]);
    expect(result.sequences).toBe(3);
    expect([...new Set(phases.map((x) => x.phase))]).toEqual([
      'check',
      'schema',
      'copy',
      'hold',
      'catch-up',
      'sequences',
      'verify',
      'cleanup',
    ]);
    expect(phases.filter((x) => x.phase === 'copy').at(-1)).toMatchObject({ tablesReady: 4, tables: 4 });
    // Writes went on during the initial copy: some were acknowledged after the subscription's snapshot.
    expect(load.inserted.size).toBeGreaterThan(0);
    await expectCompleteCopy(p, load);
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
  }, 90_000);

  it('copies with pg_dump/pg_restore when logical replication could run the project functions as a superuser', async () => {
    const p = await makeProject();
    // A project function in a CHECK constraint: restored and checked as the project's role, never the platform's.
    await sql(
      p.projectUrl,
      [
        `create function whoami_ok(n numeric) returns boolean language plpgsql as $$
           begin
             if current_user <> '${p.role.name}' then raise exception 'ran as %', current_user; end if;
             return n >= 0;
           end $$`,
        'alter table numbers add constraint numbers_v_ok check (whoami_ok(v))',
      ].join('; '),
    );
    const load = writeLoad(p);
    const result = await copyProjectDatabase({
      sourceUrl: p.platformUrl(source),
      targetUrl: p.platformUrl(target, true),
      schemaName: p.schema,
      roleName: p.role.name,
      hold: () => load.stop(),
    }).finally(() => load.stop());
    expect(result.mode).toBe('dump');
    expect(result.reason).toMatch(/defines functions \(whoami_ok\).*superuser/);
    await expectCompleteCopy(p, load);
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
  }, 90_000);

  it('copies with pg_dump/pg_restore when the target role may not create a subscription (a platform role that is no superuser)', async () => {
    const p = await makeProject();
    const load = writeLoad(p);
    const result = await copyProjectDatabase({
      sourceUrl: p.platformUrl(source),
      targetUrl: p.platformUrl(target),
      schemaName: p.schema,
      roleName: p.role.name,
      hold: () => load.stop(),
    }).finally(() => load.stop());
    expect(result).toMatchObject({ mode: 'dump' });
    expect(result.reason).toMatch(/may not create a subscription \(PostgreSQL 15: a superuser\)/);
    await expectCompleteCopy(p, load);
  }, 90_000);

  it('fails a copy whose target was changed behind its back, and cleans up', async () => {
    const p = await makeProject();
    const before = await snapshot(p);
    const err = await copyProjectDatabase({
      sourceUrl: p.platformUrl(source),
      targetUrl: p.platformUrl(target, true),
      schemaName: p.schema,
      roleName: p.role.name,
      // Once the initial copy is done: one row of the copy changed on the target.
      hold: async () => {
        await sql(p.platformUrl(target, true), `update ${p.schema}.numbers set v = v + 1 where k = 42`);
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'MOVE_FAILED',
      message: expect.stringMatching(
        /^the copy differs from the source \(p_\w+\.numbers: 3000 rows there, 3000 here\)$/,
      ),
      details: { tables: [{ table: `${p.schema}.numbers`, source_rows: 3000, target_rows: 3000 }] },
    });
    expect(await snapshot(p)).toBe(before);
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
  }, 90_000);

  const phases: [MovePhase, 'logical' | 'dump'][] = [
    ['check', 'logical'],
    ['schema', 'logical'],
    ['copy', 'logical'],
    ['hold', 'logical'],
    ['catch-up', 'logical'],
    ['sequences', 'logical'],
    ['verify', 'logical'],
    ['hold', 'dump'],
    ['catch-up', 'dump'],
    ['verify', 'dump'],
  ];
  it.each(phases)(
    'an abort at phase %s (%s mode) leaves the source as it was and nothing behind',
    async (phase, mode) => {
      const p = await makeProject();
      const before = await snapshot(p);
      const abort = new AbortController();
      const err = await copyProjectDatabase({
        sourceUrl: p.platformUrl(source),
        targetUrl: p.platformUrl(target, mode === 'logical'),
        schemaName: p.schema,
        roleName: p.role.name,
        mode,
        hold: async () => {},
        signal: abort.signal,
        onProgress: (x) => {
          if (x.phase === phase) abort.abort(new Error(`aborted at ${phase}`));
        },
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ message: `aborted at ${phase}` });
      expect(await snapshot(p)).toBe(before);
      expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
    },
    90_000,
  );

  it("cleanupLeftovers removes a stuck move's subscription, publication and replication slot (as after a killed process)", async () => {
    const p = await makeProject();
    const before = await snapshot(p);
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const abort = new AbortController();
    // A move that reached its hold and stays there (its process could be gone: nothing of it runs any more).
    const stuck = copyProjectDatabase({
      sourceUrl: p.platformUrl(source),
      targetUrl: p.platformUrl(target, true),
      schemaName: p.schema,
      roleName: p.role.name,
      hold: () => (held(), new Promise<void>(() => {})),
      signal: abort.signal,
    }).catch((e: unknown) => e);
    await holding;
    expect(await leftovers(p)).toEqual({ publications: 1, slots: 1, subscriptions: 1 });
    await cleanupLeftovers({ sourceUrl: p.platformUrl(source), targetUrl: p.platformUrl(target, true) });
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
    // Idempotent.
    await cleanupLeftovers({ sourceUrl: p.platformUrl(source), targetUrl: p.platformUrl(target, true) });
    expect(await snapshot(p)).toBe(before);
    expect(moveObjectNames(p.db).slot).toMatch(/^tessera_move_[0-9a-f]{20}$/);
    // Its own process gives up: the engine ends too, with nothing left behind.
    abort.abort(new Error('given up'));
    expect(await stuck).toMatchObject({ message: 'given up' });
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
  }, 90_000);

  it('refuses a target that already holds the project schema', async () => {
    const p = await makeProject();
    await sql(p.platformUrl(target), `create schema ${p.schema} authorization ${p.role.name}`);
    await expect(
      copyProjectDatabase({
        sourceUrl: p.platformUrl(source),
        targetUrl: p.platformUrl(target),
        schemaName: p.schema,
        roleName: p.role.name,
        hold: async () => {},
      }),
    ).rejects.toMatchObject({ code: 'MOVE_FAILED', message: expect.stringMatching(/already has the schema/) });
  }, 30_000);

  it('refuses logical mode when asked for it and the servers cannot, naming why', async () => {
    const p = await makeProject();
    await expect(
      copyProjectDatabase({
        sourceUrl: p.platformUrl(source),
        targetUrl: p.platformUrl(target),
        schemaName: p.schema,
        roleName: p.role.name,
        mode: 'logical',
        hold: async () => {},
      }),
    ).rejects.toMatchObject({ code: 'MOVE_UNSUPPORTED', status: 409 });
    expect(await leftovers(p)).toEqual({ publications: 0, slots: 0, subscriptions: 0 });
  }, 30_000);
});

describe('findPgTools', () => {
  let fake: string;
  beforeAll(() => {
    fake = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-fake-pg-'));
    for (const tool of ['pg_dump', 'pg_restore'])
      fs.writeFileSync(path.join(fake, tool), `#!/bin/sh\necho "${tool} (PostgreSQL) 12.22"\n`, { mode: 0o755 });
  });
  afterAll(() => fs.rmSync(fake, { recursive: true, force: true }));

  it("finds tools at least as new as the servers on this machine (the PATH's or /usr/lib/postgresql)", async () => {
    expect(findPgTools(undefined, 15).major).toBeGreaterThanOrEqual(15);
  });

  it('refuses a configured pg_dump older than the servers with MOVE_UNSUPPORTED naming both versions', async () => {
    let err: unknown;
    try {
      findPgTools(fake, 15);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'MOVE_UNSUPPORTED',
      status: 409,
      details: { tools_version: 12, server_version: 15, pg_bin: fake },
    });
    expect((err as Error).message).toMatch(/pg_dump 12 \(.*\) is older than the servers \(PostgreSQL 15\)/);
  });

  it('refuses a whole move before touching anything when the configured tools are too old', async () => {
    const p = await makeProject();
    await expect(
      copyProjectDatabase({
        sourceUrl: p.platformUrl(source),
        targetUrl: p.platformUrl(target, true),
        schemaName: p.schema,
        roleName: p.role.name,
        pgBin: fake,
        hold: async () => {},
      }),
    ).rejects.toMatchObject({ code: 'MOVE_UNSUPPORTED' });
    expect(
      (await sql(p.platformUrl(target), 'select 1 from pg_namespace where nspname = $1', [p.schema])).rowCount,
    ).toBe(0);
  }, 30_000);
});
