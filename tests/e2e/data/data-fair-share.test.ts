// Fair shares of the shared database over HTTP, on a small connection budget (6) so that three hostile projects can
// contend it: each hostile project holds at most its plan's max_database_connections while it keeps every
// connection it can in pg_sleep, and a victim project's finds keep answering (served before the hostile waiters,
// since it holds fewer connections). A plan's database_cpu_seconds_per_minute refuses a project's statements with 429
// (naming the limit, with Retry-After) once they took that much time in a minute; another project is not affected, and
// the operator raising the limit lets it work again.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTessera } from '../../../main.ts';
import { loadPressure } from '../../../platform/load-pressure.ts';
import { PER_PROJECT } from '../../../platform/request-lane.ts';
import { startOneProcess, TEST_SECRET, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { setPlanLimits } from '../../support/plans.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, dataCall, dropLeftoverRoles, signIn, type Call, type DataProject } from './data-support.ts';

const BUDGET = 6;

let platform: TestPlatform;
let call: Call;
let databaseUrl: string;
let hostile: DataProject[];
let victim: DataProject;

beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_DATA_MAX_CONNECTIONS: String(BUDGET) });
  databaseUrl = platform.databaseUrl;
  call = client(platform.url);
  // The test suite's accounts are on the free plan: 2 connections each, no statement-time budget to start with.
  await setPlanLimits(databaseUrl, 'free', { max_database_connections: 2, database_cpu_seconds_per_minute: null });
  const attacker = await signIn(call);
  hostile = [];
  for (const i of [1, 2, 3]) hostile.push(await createProject(call, attacker, `hostile ${i}`));
  victim = await createProject(call, await signIn(call), 'victim');
  const made = await dataCall(call, victim.apiKey)('rawSQL', {
    sql: "create table notes (id serial primary key, title text); insert into notes (title) values ('kept')",
  });
  expect(made.status).toBe(200);
  for (const h of hostile) expect((await dataCall(call, h.apiKey)('rawSQL', { sql: 'select 1' })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await platform?.close();
  if (databaseUrl) await dropLeftoverRoles(databaseUrl);
});

/** Data connections open now per project database (the project's database name → count). */
async function connectionsByDatabase(): Promise<Map<string, number>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string; n: number }>(
      `select datname, count(*)::int as n from pg_stat_activity where application_name = 'tessera-data' group by datname`,
    );
    return new Map(rows.map((r) => [r.datname, r.n]));
  } finally {
    await c.end();
  }
}

async function databaseOf(projectId: string): Promise<string> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ d: string }>(
      'select database_name as d from data_project_roles where project_id = $1',
      [projectId],
    );
    return rows[0]!.d;
  } finally {
    await c.end();
  }
}

describe('connections by plan and by share', () => {
  it('holds each hostile project to 2 connections and keeps answering a victim while three of them fill the budget', async () => {
    const hostileDbs = await Promise.all(hostile.map(async (h) => await databaseOf(h.id)));
    let stop = false;
    const statuses: number[] = [];
    // Each hostile project keeps 4 requests in pg_sleep at all times (twice what its plan lets it hold).
    const attack = (h: DataProject) =>
      [1, 2, 3, 4].map(async () => {
        const data = dataCall(call, h.apiKey);
        while (!stop) statuses.push((await data('rawSQL', { sql: 'select pg_sleep(0.5)' })).status);
      });
    let most = 0;
    const sample = async () => {
      const open = await connectionsByDatabase();
      for (const d of hostileDbs) most = Math.max(most, open.get(d) ?? 0);
      return open;
    };
    // The first one alone, with the whole budget free: its plan, not the budget, holds it to 2.
    const loops = attack(hostile[0]!);
    try {
      await waitFor(async () => (await sample()).get(hostileDbs[0]!) === 2, { message: 'the first hostile project' });
      // A pause that proves something does NOT happen: with 4 requests in flight it never opens a third connection.
      const until = Date.now() + 1500;
      while (Date.now() < until) await sample();
      expect(most).toBe(2);
      loops.push(...attack(hostile[1]!), ...attack(hostile[2]!));
      // The three hostile projects hold the whole budget (2 + 2 + 2).
      await waitFor(
        async () => {
          const open = await sample();
          return hostileDbs.every((d) => open.get(d) === 2);
        },
        { message: 'the hostile projects holding their shares' },
      );
      const data = dataCall(call, victim.apiKey);
      const answers: number[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await data('find', { table: 'notes', select: ['title'] });
        answers.push(res.status);
        expect(res.body.rows).toEqual([{ title: 'kept' }]);
        await sample();
      }
      expect(answers.filter((s) => s !== 200)).toEqual([]);
    } finally {
      stop = true;
      await Promise.all(loops);
    }
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBe(2);
    // The hostile requests waited their turn (or, past TESSERA_DATA_POOL_WAIT_MS, were told to retry).
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
  }, 120_000);
});

describe("the process's event loop by share (platform/request-lane.ts)", () => {
  // Saturation is the gauge's verdict on this process's event loop, which a test cannot make happen on cue: the test
  // gives the verdict itself (in one-process mode the platform runs in this process, with this module instance).
  const saturatedFor = loadPressure.saturatedFor;
  afterAll(async () => {
    loadPressure.saturatedFor = saturatedFor;
    await setPlanLimits(databaseUrl, 'free', { max_database_connections: 2 });
  });

  it("while saturated, runs a project's requests PER_PROJECT at a time while they use the event loop, its statements as many as its plan's connections, and serves another project before that backlog", async () => {
    // Turns are held while a request uses the process, not while its statement runs in PostgreSQL: how many
    // statements a project runs at once is its plan's connections (3 here, more than the lane's PER_PROJECT).
    await setPlanLimits(databaseUrl, 'free', { max_database_connections: 3 });
    loadPressure.saturatedFor = () => true;
    const flood = dataCall(call, hostile[0]!.apiKey);
    const sleeping = async () => {
      const c = new pg.Client({ connectionString: databaseUrl });
      await c.connect();
      try {
        const { rows } = await c.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity a join data_project_roles r on r.role_name = a.usename
            where r.project_id = $1 and a.query like 'select pg_sleep%' and a.state = 'active'`,
          [hostile[0]!.id],
        );
        return rows[0]!.n;
      } finally {
        await c.end();
      }
    };
    const answered: string[] = [];
    const sent = Array.from({ length: 8 }, (_, i) =>
      flood('rawSQL', { sql: 'select pg_sleep(0.4)' }).then((res) => {
        answered.push(`hostile ${i}`);
        return res.status;
      }),
    );
    await waitFor(async () => (await sleeping()) >= 1, { message: 'the first statements running' });
    const victimFind = await dataCall(call, victim.apiKey)('find', { table: 'notes', select: ['title'] });
    answered.push('victim');
    expect(victimFind.status).toBe(200);
    // The victim was answered while most of the flood still waited.
    expect(answered.indexOf('victim')).toBeLessThan(4);
    let most = 0;
    while (answered.length < 9) {
      most = Math.max(most, await sleeping());
      await new Promise((r) => setTimeout(r, 50)); // sampling how many run at once, not waiting for a result
    }
    expect(await Promise.all(sent)).toEqual(Array(8).fill(200));
    expect(most).toBeGreaterThan(PER_PROJECT);
    expect(most).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe('statement time by plan (database_cpu_seconds_per_minute)', () => {
  afterAll(async () => {
    await setPlanLimits(databaseUrl, 'free', { database_cpu_seconds_per_minute: null });
  });

  it('refuses a project past its statement time with 429 naming the limit, spares another, and works again once raised', async () => {
    // A project of its own (the hostile ones spent their minute above): the victim's tenant makes a second one.
    const heavy = dataCall(call, (await createProject(call, victim.token, 'heavy')).apiKey);
    expect((await heavy('rawSQL', { sql: 'select 1' })).status).toBe(200);
    await setPlanLimits(databaseUrl, 'free', { database_cpu_seconds_per_minute: 1 });
    // The plan change reaches the data service by broadcast: keep sleeping 0.3 s until the budget is spent.
    let slept = 0;
    const refused = await waitFor(
      async () => {
        const res = await heavy('rawSQL', { sql: 'select pg_sleep(0.3)' });
        if (res.status !== 200) return res;
        slept++;
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1, message: 'a refusal' },
    );
    expect(refused.status).toBe(429);
    expect(slept).toBeGreaterThanOrEqual(2); // 0.6 s is under the budget of 1 s: refused only past it
    expect(refused.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 'database_cpu_seconds_per_minute', max: 1 },
    });
    expect(refused.body.error.message).toContain('database_cpu_seconds_per_minute');
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // Refused before it takes a connection: a cheap statement too.
    expect((await heavy('rawSQL', { sql: 'select 1' })).status).toBe(429);
    // Another project on the same plan has its own budget.
    const other = await dataCall(call, victim.apiKey)('find', { table: 'notes', select: ['title'] });
    expect(other.status).toBe(200);
    // The operator raises the limit: the project works again.
    await setPlanLimits(databaseUrl, 'free', { database_cpu_seconds_per_minute: 60 });
    await waitFor(async () => (await heavy('rawSQL', { sql: 'select 1' })).status === 200, {
      message: 'the raised limit to apply',
    });
  }, 60_000);
});

describe('statement time across instances', () => {
  let secondDir: string;
  let second: Awaited<ReturnType<typeof startTessera>>;

  beforeAll(async () => {
    // Another instance on the same database (as a second server behind a load balancer would be).
    secondDir = fs.mkdtempSync(path.join(path.resolve('.tessera', 'test-data'), 'p-'));
    second = await startTessera({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: secondDir,
      TESSERA_INTERNAL_SECRET: TEST_SECRET,
      TESSERA_DATA_MAX_CONNECTIONS: String(BUDGET),
    });
  }, 120_000);

  afterAll(async () => {
    await second?.close();
    if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true });
    await setPlanLimits(databaseUrl, 'free', { database_cpu_seconds_per_minute: null });
  });

  it('refuses on one instance the time a project spent on another', async () => {
    const project = await createProject(call, victim.token, 'shared');
    const here = dataCall(call, project.apiKey);
    const there = dataCall(client(second.url), project.apiKey);
    expect((await there('rawSQL', { sql: 'select 1' })).status).toBe(200);
    await setPlanLimits(databaseUrl, 'free', { database_cpu_seconds_per_minute: 1 });
    for (let i = 0; i < 3; i++) expect((await here('rawSQL', { sql: 'select pg_sleep(0.4)' })).status).not.toBe(500);
    // Nothing of it ran there: the other instance hears the time within a second or so and refuses.
    const refused = await waitFor(
      async () => {
        const res = await there('rawSQL', { sql: 'select 1' });
        return res.status === 429 ? res : undefined;
      },
      { intervalMs: 100, message: 'the other instance to refuse' },
    );
    expect(refused.body.error.details).toMatchObject({ limit: 'database_cpu_seconds_per_minute', max: 1 });
  }, 60_000);
});
