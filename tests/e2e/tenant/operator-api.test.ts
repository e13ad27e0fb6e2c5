// The operator's admin API (/admin/api/v1) end to end: every row's happy path, bad input, the audit log, operator keys,
// suspension of a project and of an account, and a plan change applying at once.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../support/wait-for.ts';
import path from 'node:path';
import {
  startOneProcess,
  startProcess,
  stopProcess,
  tmpDataDir,
  TEST_SECRET,
  type TestPlatform,
} from '../../support/platform.ts';
import { freePort } from '../../../platform/net.ts';
import { client, type Res } from '../../support/http.ts';
import { ROUTE_TABLE } from '../../../rest-compat/route-table.ts';
import { put } from '../storage/storage-fixtures.ts';

const OPERATOR_KEY = `top_${'k'.repeat(43)}`;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const PASSWORD = 'a long password';

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

describe('the operator admin API', () => {
  let p: TestPlatform;
  let call: ReturnType<typeof client>;
  let token: string;
  let refreshToken: string;
  let tenantId: string;
  let projectId: string;
  let apiKey: string;
  const op = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });

  beforeAll(async () => {
    p = await startOneProcess({ TESSERA_OPERATOR_KEY: OPERATOR_KEY });
    call = client(p.url);
    await call('POST', '/auth/api/v1/tenants/signup', { body: { email: 'owner@example.com', password: PASSWORD } });
    const login = await call('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'owner@example.com', password: PASSWORD },
    });
    token = login.body.access_token;
    refreshToken = login.body.refresh_token;
    tenantId = login.body.tenant.id;
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Shop' } });
    projectId = created.body.project.id;
    apiKey = created.body.project.api_key;
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it('npm run operator-key prints a key TESSERA_OPERATOR_KEY accepts', () => {
    const out = execFileSync(process.execPath, ['scripts/operator-key.ts'], { encoding: 'utf8' }).trim();
    expect(out).toMatch(/^top_[A-Za-z0-9_-]{43}$/);
    const env = execFileSync(process.execPath, ['scripts/operator-key.ts', '--env'], { encoding: 'utf8' }).trim();
    expect(env).toMatch(/^TESSERA_OPERATOR_KEY=top_[A-Za-z0-9_-]{43}$/);
  });

  it('lists the plans with their limits, tenant counts and the default', async () => {
    const res = await op('GET', '/plans');
    expect(res.status).toBe(200);
    const ids = res.body.plans.map((x: { id: string }) => x.id);
    expect(ids).toEqual(expect.arrayContaining(['self-hosted', 'free', 'pro', 'enterprise']));
    const free = res.body.plans.find((x: { id: string }) => x.id === 'free');
    expect(free).toMatchObject({ default: true, tenant_count: 1, price_cents_per_month: null });
    expect(free.limits).toMatchObject({ max_cron_jobs: 5, min_cron_interval_seconds: 10, max_projects: 3 });
    expect(Object.keys(free.limits)).toHaveLength(16);
    const selfHosted = res.body.plans.find((x: { id: string }) => x.id === 'self-hosted');
    expect(Object.values(selfHosted.limits).every((v) => v === null)).toBe(true);
  });

  it('creates, edits and deletes a plan, each audited', async () => {
    const created = await op('POST', '/plans', {
      id: 'team',
      name: 'Team',
      price_cents_per_month: 4900,
      limits: { max_projects: 10, max_cron_jobs: 20, database_cpu_seconds_per_minute: 2.5 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'team', name: 'Team', price_cents_per_month: 4900, tenant_count: 0 });
    expect(created.body.limits).toMatchObject({ max_projects: 10, max_cron_jobs: 20, max_storage_bytes: null });
    expect(created.body.limits.database_cpu_seconds_per_minute).toBe(2.5);
    expectError(await op('POST', '/plans', { id: 'team', name: 'Again' }), 409, 'CONFLICT');

    const edited = await op('PATCH', '/plans/team', {
      description: 'For teams',
      limits: { max_projects: null, min_cron_interval_seconds: 30 },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ description: 'For teams' });
    expect(edited.body.limits).toMatchObject({ max_projects: null, min_cron_interval_seconds: 30, max_cron_jobs: 20 });
    // The public list shows it too, with its price.
    const pub = await call('GET', '/auth/api/v1/plans');
    expect(pub.body.plans.find((x: { id: string }) => x.id === 'team')).toMatchObject({ price_cents_per_month: 4900 });

    expect((await op('DELETE', '/plans/team')).status).toBe(204);
    expectError(await op('PATCH', '/plans/team', { name: 'x' }), 404, 'NOT_FOUND');

    const audit = await op('GET', '/audit?target_id=team');
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'plan.delete',
      'plan.update',
      'plan.create',
    ]);
    expect(audit.body.entries[0]).toMatchObject({ operator: 'bootstrap', target_kind: 'plan', target_id: 'team' });
    expect(audit.body.entries[1].details).toMatchObject({ description: 'For teams', max_projects: null });
    expect(typeof audit.body.entries[0].at).toBe('string');
  });

  it('refuses bad plan input with a 4xx naming the field', async () => {
    expectError(await op('POST', '/plans', { id: 'Bad Id', name: 'x' }), 400, 'VALIDATION_FAILED', /id/);
    expectError(await op('POST', '/plans', { id: 'ok-id' }), 400, 'BAD_USER_INPUT', /name/);
    expectError(await op('POST', '/plans', { id: 'ok', name: 'x', colour: 'red' }), 400, 'BAD_USER_INPUT', /colour/);
    expectError(
      await op('PATCH', '/plans/free', { limits: { max_cron_jobs: -1 } }),
      400,
      'VALIDATION_FAILED',
      /max_cron_jobs/,
    );
    expectError(
      await op('PATCH', '/plans/free', { limits: { max_cron_jobs: 1.5 } }),
      400,
      'BAD_USER_INPUT',
      /max_cron_jobs/,
    );
    expectError(
      await op('PATCH', '/plans/free', { limits: { min_cron_interval_seconds: 0 } }),
      400,
      'VALIDATION_FAILED',
      /min_cron_interval_seconds/,
    );
    expectError(
      await op('PATCH', '/plans/free', { limits: { database_cpu_seconds_per_minute: 0 } }),
      400,
      'VALIDATION_FAILED',
      /database_cpu_seconds_per_minute/,
    );
    expectError(await op('PATCH', '/plans/free', { limits: { max_widgets: 3 } }), 400, 'BAD_USER_INPUT', /max_widgets/);
    expectError(await op('PATCH', '/plans/free', { price_cents_per_month: -5 }), 400, 'VALIDATION_FAILED');
    expectError(await op('PATCH', '/plans/nope', { name: 'x' }), 404, 'NOT_FOUND');
    expectError(await op('GET', '/tenants/not-a-uuid'), 404, 'NOT_FOUND');
    expectError(await op('GET', `/projects/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
    expectError(await op('PUT', `/tenants/${tenantId}/plan`, { plan_id: 'nope' }), 404, 'NOT_FOUND');
    expectError(await op('PUT', '/settings/default-plan', { plan_id: 'nope' }), 404, 'NOT_FOUND');
    expectError(await op('GET', '/tenants?first=0'), 400, 'VALIDATION_FAILED', /first/);
    expectError(await op('GET', '/audit?after=garbage'), 400, 'VALIDATION_FAILED', /after/);
  });

  it('will not delete a plan in use or the default one', async () => {
    expectError(await op('DELETE', '/plans/free'), 409, 'PLAN_IN_USE', /default/);
    await op('PUT', '/settings/default-plan', { plan_id: 'self-hosted' });
    expectError(await op('DELETE', '/plans/free'), 409, 'PLAN_IN_USE', /account/);
    await op('PUT', '/settings/default-plan', { plan_id: 'free' });
  });

  it('lists, finds and reads tenants and projects, with usage', async () => {
    const tenants = await op('GET', '/tenants?search=OWNER@');
    expect(tenants.status).toBe(200);
    expect(tenants.body.next_cursor).toBeNull();
    expect(tenants.body.tenants).toEqual([
      expect.objectContaining({
        id: tenantId,
        email: 'owner@example.com',
        plan: { id: 'free', name: 'Free' },
        project_count: 1,
        suspended_at: null,
      }),
    ]);
    expect((await op('GET', '/tenants?search=nobody')).body.tenants).toEqual([]);
    expect((await op('GET', `/tenants/${tenantId}`)).body.email).toBe('owner@example.com');

    const projects = await op('GET', `/projects?tenant_id=${tenantId}`);
    expect(projects.status).toBe(200);
    expect(projects.body.projects).toEqual([
      expect.objectContaining({
        id: projectId,
        name: 'Shop',
        tenant: { id: tenantId, email: 'owner@example.com' },
        plan: { id: 'free', name: 'Free' },
        suspended_at: null,
      }),
    ]);
    expect(projects.body.projects[0].storage_usage).toMatchObject({ objects: 0, bytes: 0 });
    // Usage gathered from the data and functions subgraphs through the router, read as the operator.
    expect(projects.body.projects[0].database_usage).toMatchObject({
      rows: expect.any(Number),
      bytes: expect.any(Number),
      max_rows: 100_000,
      max_bytes: 500 * 1024 ** 2,
    });
    expect(projects.body.projects[0].database_usage.bytes).toBeGreaterThan(0);
    expect(projects.body.projects[0].function_usage).toEqual({ runs_this_month: 0, running_now: 0, cron_jobs: 0 });
    expect(JSON.stringify(projects.body)).not.toContain('tsk_');
    const one = await op('GET', `/projects/${projectId}`);
    expect(one.body).toMatchObject({ id: projectId, name: 'Shop' });
    expect((await op('GET', '/projects?search=sho')).body.projects.map((x: { id: string }) => x.id)).toEqual([
      projectId,
    ]);
  });

  it('pages through lists with first and next_cursor', async () => {
    for (const email of ['page1@example.com', 'page2@example.com'])
      await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
    const first = await op('GET', '/tenants?first=2');
    expect(first.body.tenants).toHaveLength(2);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await op('GET', `/tenants?first=2&after=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.tenants.length).toBeGreaterThanOrEqual(1);
    const seen = [...first.body.tenants, ...second.body.tenants].map((t: { id: string }) => t.id);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("shows each account's usage: all its projects' together, no other account's; zeros without projects", async () => {
    type Made = { id: string; apiKey: string; tenantToken: string };
    const account = async (email: string, names: string[]) => {
      await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
      const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: PASSWORD } });
      const t = login.body.access_token as string;
      const projects: Made[] = [];
      for (const name of names) {
        const res = await call('POST', '/auth/api/v1/projects', { token: t, body: { name } });
        expect(res.status).toBe(201);
        projects.push({ id: res.body.project.id, apiKey: res.body.project.api_key, tenantToken: t });
      }
      return { id: login.body.tenant.id as string, projects };
    };
    const rows = async (pr: Made, n: number) => {
      expect(
        (await call('POST', '/v1/rawSQL', { apiKey: pr.apiKey, body: { sql: 'create table items (n int)' } })).status,
      ).toBe(200);
      const sql = `insert into items select g from generate_series(1, ${n}) g`;
      expect((await call('POST', '/v1/rawSQL', { apiKey: pr.apiKey, body: { sql } })).status).toBe(200);
    };
    const file = async (pr: Made, name: string, content: string, confirm = true) =>
      expect((await put(p.url, pr, '', name, content, { confirm })).status).toBe(201);
    const runs = async (pr: Made, n: number, cron = false) => {
      const fn = await call('POST', '/edge/api/v1/functions', {
        apiKey: pr.apiKey,
        body: { name: 'hello', steps: [{ name: 'out', kind: 'Transform', expression: { ok: true } }] },
      });
      expect(fn.status).toBe(201);
      for (let i = 0; i < n; i++)
        expect((await call('POST', '/edge/api/v1/invoke/hello', { apiKey: pr.apiKey, body: {} })).status).toBe(200);
      if (cron) {
        const job = { name: 'yearly', schedule: '0 0 1 1 *', timezone: 'UTC', function: 'hello' };
        expect((await call('POST', '/edge/api/v1/cron', { apiKey: pr.apiKey, body: job })).status).toBe(201);
      }
    };

    const two = await account('two-projects@example.com', ['One', 'Two']);
    const [one, other] = two.projects as [Made, Made];
    await rows(one, 3);
    await rows(other, 2);
    await file(one, 'a.txt', 'hello');
    await file(one, 'b.txt', 'goodbye');
    await file(other, 'pending.txt', 'wait', false);
    await runs(one, 1, true);
    await runs(other, 1);
    // A neighbour with usage of its own, none of which may show in the first account's totals.
    const neighbour = await account('neighbour-usage@example.com', ['Theirs']);
    const [theirs] = neighbour.projects as [Made];
    await rows(theirs, 40);
    await file(theirs, 'big.txt', 'x'.repeat(100));
    await runs(theirs, 3, true);
    const empty = await account('no-projects@example.com', []);

    /** The account's row, once its database and run totals have caught up (statistics and run counts lag ~1 s). */
    const settled = async (id: string, wantRows: number, wantRuns: number) =>
      await waitFor(
        async () => {
          const listed = (await op('GET', `/projects?tenant_id=${id}`)).body.projects as {
            database_usage: { bytes: number };
          }[];
          const row = (await op('GET', `/tenants/${id}`)).body;
          const bytes = listed.reduce((n, x) => n + x.database_usage.bytes, 0);
          return (
            row.database_usage.rows === wantRows &&
            row.database_usage.bytes === bytes &&
            row.function_usage.runs_this_month === wantRuns &&
            row
          );
        },
        { timeoutMs: 30_000, message: `the totals of ${id}` },
      );
    const mine = await settled(two.id, 5, 2);
    expect(mine).toMatchObject({
      project_count: 2,
      storage_usage: { objects: 2, bytes: 12, pending_objects: 1, pending_bytes: 4 },
      database_usage: { rows: 5, unmeasured: 0 },
      function_usage: { runs_this_month: 2, running_now: 0, cron_jobs: 1 },
    });
    // Two databases, each at least the template's size.
    expect(mine.database_usage.bytes).toBeGreaterThan(2 * 1024 * 1024);
    const theirsRow = await settled(neighbour.id, 40, 3);
    expect(theirsRow).toMatchObject({
      project_count: 1,
      storage_usage: { objects: 1, bytes: 100, pending_objects: 0, pending_bytes: 0 },
      function_usage: { runs_this_month: 3, running_now: 0, cron_jobs: 1 },
    });

    // The list carries the same totals; an account without projects shows zeros.
    const listed = (await op('GET', '/tenants?first=100')).body.tenants as { id: string }[];
    expect(listed.find((t) => t.id === two.id)).toMatchObject({
      storage_usage: mine.storage_usage,
      database_usage: mine.database_usage,
      function_usage: mine.function_usage,
    });
    expect(listed.find((t) => t.id === empty.id)).toMatchObject({
      project_count: 0,
      storage_usage: { objects: 0, bytes: 0, pending_objects: 0, pending_bytes: 0 },
      database_usage: { rows: 0, bytes: 0, unmeasured: 0 },
      function_usage: { runs_this_month: 0, running_now: 0, cron_jobs: 0 },
    });
    // The ids the totals are summed over stay inside the platform.
    expect(JSON.stringify(listed)).not.toMatch(/project_?ids/i);
  }, 120_000);

  it("moves a tenant to another plan: its project's limits change at once", async () => {
    const moved = await op('PUT', `/tenants/${tenantId}/plan`, { plan_id: 'pro' });
    expect(moved.status).toBe(200);
    expect(moved.body.plan).toEqual({ id: 'pro', name: 'Pro' });
    const seen = await call('GET', `/auth/api/v1/projects/${projectId}`, { token });
    expect(seen.body.project.plan.id).toBe('pro');
    // The plan's request quota applies from the next request: a tight one on pro refuses the second call.
    await op('PATCH', '/plans/pro', { limits: { max_requests_per_minute: 1 } });
    await call('POST', '/v1/find', { apiKey, body: { table: 'nothing_here' } });
    expectError(await call('POST', '/v1/find', { apiKey, body: { table: 'nothing_here' } }), 429, 'RATE_LIMITED');
    // Once refused, the known key is refused before its check (the same answer); an unknown key is still a 401.
    const again = await call('POST', '/v1/find', { apiKey, body: { table: 'nothing_here' } });
    expectError(again, 429, 'RATE_LIMITED');
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(
      await call('POST', '/v1/find', { apiKey: `${apiKey}x`, body: { table: 'nothing_here' } }),
      401,
      'INVALID_API_KEY',
    );
    await op('PATCH', '/plans/pro', { limits: { max_requests_per_minute: null } });
    expect((await call('POST', '/v1/find', { apiKey, body: { table: 'nothing_here' } })).status).not.toBe(429);
    await op('PUT', `/tenants/${tenantId}/plan`, { plan_id: 'free' });
    const audit = await op('GET', `/audit?action=tenant.plan&target_id=${tenantId}`);
    expect(audit.body.entries[0].details).toEqual({ plan_id: 'free', previous_plan_id: 'pro' });
  });

  it('suspends a project: every credential refused with PROJECT_SUSPENDED, data back after resume', async () => {
    const pk = (await call('GET', `/auth/api/v1/projects/${projectId}`, { token })).body.project.publishable_key;
    await call('POST', '/v1/rawSQL', {
      apiKey,
      body: { sql: 'create table notes (id serial primary key, body text)' },
    });
    expect(
      (await call('POST', '/v1/insert', { apiKey, body: { table: 'notes', values: { body: 'kept' } } })).status,
    ).toBe(201);
    const suspended = await op('POST', `/projects/${projectId}/suspend`, { reason: 'abuse report' });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ id: projectId, suspended_reason: 'abuse report' });
    expect(typeof suspended.body.suspended_at).toBe('string');

    expectError(
      await call('POST', '/v1/find', { apiKey, body: { table: 'notes' } }),
      403,
      'PROJECT_SUSPENDED',
      /operator/,
    );
    expectError(await call('POST', '/v1/find', { apiKey: pk, body: { table: 'notes' } }), 403, 'PROJECT_SUSPENDED');
    expectError(await call('GET', '/storage/api/v1/storage/objects', { apiKey }), 403, 'PROJECT_SUSPENDED');
    expectError(
      await call('POST', `/webhooks/${projectId}/anything`, { body: { hello: 1 } }),
      403,
      'PROJECT_SUSPENDED',
    );
    // The owner still sees the project (and that it is suspended) in tenant management.
    const owner = await call('GET', `/auth/api/v1/projects/${projectId}`, { token });
    expect(owner.status).toBe(200);

    const resumed = await op('POST', `/projects/${projectId}/resume`);
    expect(resumed.body.suspended_at).toBeNull();
    const rows = await call('POST', '/v1/find', { apiKey, body: { table: 'notes' } });
    expect(rows.status).toBe(200);
    expect(rows.body.rows).toEqual([{ id: 1, body: 'kept' }]);
    const audit = await op('GET', `/audit?target_id=${projectId}`);
    expect(audit.body.entries.slice(0, 2).map((e: { action: string }) => e.action)).toEqual([
      'project.resume',
      'project.suspend',
    ]);
    expect(audit.body.entries[1].details).toEqual({ reason: 'abuse report' });
  });

  it('suspends an account: its token, its sign-in (after the password) and its projects refused; resume', async () => {
    expect((await op('POST', `/tenants/${tenantId}/suspend`, {})).body.suspended_at).toEqual(expect.any(String));
    expectError(await call('GET', '/auth/api/v1/tenant', { token }), 403, 'TENANT_SUSPENDED');
    expectError(
      await call('POST', '/auth/api/v1/tenant/refresh', { body: { refresh_token: refreshToken } }),
      403,
      'TENANT_SUSPENDED',
    );
    expectError(
      await call('POST', '/auth/api/v1/tenant/login', { body: { email: 'owner@example.com', password: PASSWORD } }),
      403,
      'TENANT_SUSPENDED',
    );
    // A wrong password says nothing about the suspension.
    expectError(
      await call('POST', '/auth/api/v1/tenant/login', { body: { email: 'owner@example.com', password: 'wrong one!' } }),
      401,
      'INVALID_CREDENTIALS',
    );
    expectError(await call('POST', '/v1/find', { apiKey, body: { table: 'notes' } }), 403, 'PROJECT_SUSPENDED');
    await op('POST', `/tenants/${tenantId}/resume`);
    expect((await call('GET', '/auth/api/v1/tenant', { token })).status).toBe(200);
    expect((await call('POST', '/v1/find', { apiKey, body: { table: 'notes' } })).status).toBe(200);
  });

  it('makes, lists and revokes operator keys; a revoked key stops at once; the bootstrap key stays', async () => {
    const made = await op('POST', '/operator-keys', { name: 'alice' });
    expect(made.status).toBe(201);
    expect(made.body.key).toMatch(/^top_/);
    expect(made.body.key.startsWith(made.body.key_prefix)).toBe(true);
    const alice = made.body.key as string;
    // Alice acts under her own name.
    const byAlice = await call('PATCH', '/admin/api/v1/plans/pro', { token: alice, body: { description: 'Pro plan' } });
    expect(byAlice.status).toBe(200);
    const audit = await op('GET', '/audit?target_id=pro');
    expect(audit.body.entries[0]).toMatchObject({ operator: 'alice', action: 'plan.update' });
    const keys = await op('GET', '/operator-keys');
    const listed = keys.body.operator_keys.find((k: { id: string }) => k.id === made.body.id);
    expect(listed).toMatchObject({ name: 'alice', created_by: 'bootstrap', revoked_at: null });
    expect(typeof listed.last_used_at).toBe('string');
    expect(JSON.stringify(keys.body)).not.toContain(alice);
    expect(JSON.stringify((await op('GET', '/audit')).body)).not.toContain(alice);

    expect((await op('DELETE', `/operator-keys/${made.body.id}`)).status).toBe(204);
    expectError(await call('GET', '/admin/api/v1/plans', { token: alice }), 401, 'INVALID_TOKEN');
    expectError(await op('DELETE', '/operator-keys/bootstrap'), 409, 'CONFLICT', /TESSERA_OPERATOR_KEY/);
    expectError(await op('DELETE', `/operator-keys/${UNKNOWN_ID}`), 404, 'NOT_FOUND');
    expectError(await op('POST', '/operator-keys', { name: '' }), 400, 'VALIDATION_FAILED', /name/);
  });

  it('lists every kind of change in the audit log, newest first, page by page', async () => {
    const all: { action: string; at: string; operator: string }[] = [];
    let after: string | null = null;
    do {
      const page: Res = await op('GET', `/audit?first=3${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(3);
      all.push(...page.body.entries);
      after = page.body.next_cursor;
    } while (after);
    expect(new Set(all.map((e) => e.action))).toEqual(
      new Set([
        'plan.create',
        'plan.update',
        'plan.delete',
        'settings.default_plan',
        'tenant.plan',
        'tenant.suspend',
        'tenant.resume',
        'project.suspend',
        'project.resume',
        'operator_key.create',
        'operator_key.revoke',
      ]),
    );
    const times = all.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(new Set(all.map((e) => e.operator))).toEqual(new Set(['bootstrap', 'alice']));
  });

  it("a change made through one process's admin API applies at once in another process (the broadcast path)", async () => {
    const port = await freePort();
    const other = `http://127.0.0.1:${port}`;
    const child = await startProcess(
      [path.resolve('main.ts')],
      {
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        DATABASE_URL: p.databaseUrl,
        TESSERA_DATA_DIR: tmpDataDir(),
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        TESSERA_DEFAULT_PLAN: 'free',
        TESSERA_OPERATOR_KEY: OPERATOR_KEY,
      },
      `${other}/health`,
    );
    try {
      const there = client(other);
      const find = () => there('POST', '/v1/find', { apiKey, body: { table: 'notes' } });
      // The other process has read the project's plan (and cached its key) before the changes.
      expect((await find()).status).toBe(200);
      expect((await find()).status).toBe(200);
      await op('PATCH', '/plans/free', { limits: { max_requests_per_minute: 0 } });
      expectError(await find(), 429, 'RATE_LIMITED');
      await op('PATCH', '/plans/free', { limits: { max_requests_per_minute: 600 } });
      expect((await find()).status).toBe(200);
      await op('POST', `/projects/${projectId}/suspend`, {});
      expectError(await find(), 403, 'PROJECT_SUSPENDED');
      await op('POST', `/projects/${projectId}/resume`);
      expect((await find()).status).toBe(200);
    } finally {
      await stopProcess(child);
    }
  }, 120_000);

  it('every admin row refuses anonymous callers (401) and tenant or project credentials (403)', async () => {
    const rows = ROUTE_TABLE.filter((r) => r.auth === 'operator');
    // 19 of issue 28, 5 for project servers, 4 for moves and drains (issue 29): a new row is added here on purpose.
    expect(rows.length).toBe(28);
    const path = (p: string) => p.replace(':id', UNKNOWN_ID);
    for (const row of rows) {
      const body = row.method === 'GET' || row.method === 'DELETE' ? undefined : {};
      expectError(await call(row.method, path(row.path), { body }), 401, 'UNAUTHENTICATED', /operator key/);
      expectError(await call(row.method, path(row.path), { body, token }), 403, 'FORBIDDEN', /operator key/);
      expectError(await call(row.method, path(row.path), { body, apiKey }), 403, 'FORBIDDEN', /operator key/);
    }
  });
});

describe('a fresh install without TESSERA_DEFAULT_PLAN', () => {
  let p: TestPlatform;
  let call: ReturnType<typeof client>;
  beforeAll(async () => {
    // Private networks allowed: a function's HTTP step calls a server of this test on loopback.
    p = await startOneProcess({
      TESSERA_OPERATOR_KEY: OPERATOR_KEY,
      TESSERA_DEFAULT_PLAN: 'self-hosted',
      TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    call = client(p.url);
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it('puts new accounts on self-hosted until the operator picks another default', async () => {
    const op = (method: string, path: string, body?: unknown) =>
      call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });
    expect((await op('GET', '/settings')).body).toEqual({ default_plan: 'self-hosted', default_plan_source: 'config' });
    const first = await call('POST', '/auth/api/v1/tenants/signup', {
      body: { email: 'first@example.com', password: PASSWORD },
    });
    expect(first.body.tenant.plan.id).toBe('self-hosted');
    const set = await op('PUT', '/settings/default-plan', { plan_id: 'free' });
    expect(set.body).toEqual({ default_plan: 'free', default_plan_source: 'operator' });
    const second = await call('POST', '/auth/api/v1/tenants/signup', {
      body: { email: 'second@example.com', password: PASSWORD },
    });
    expect(second.body.tenant.plan.id).toBe('free');
    const audit = await op('GET', '/audit?action=settings.default_plan');
    expect(audit.body.entries[0]).toMatchObject({ operator: 'bootstrap', details: { plan_id: 'free' } });
  });

  it("stops a suspended project's cron (its neighbour's keeps running) and starts it again on resume", async () => {
    const op = (method: string, path: string, body?: unknown) =>
      call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });
    // Every-second ticks: back to the default without a cron interval (the test above made free the default).
    expect((await op('PUT', '/settings/default-plan', { plan_id: 'self-hosted' })).status).toBe(200);
    const project = async (email: string) => {
      await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
      const t = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: PASSWORD } })).body
        .access_token;
      const created = (await call('POST', '/auth/api/v1/projects', { token: t, body: { name: 'Cron' } })).body.project;
      const fn = await call('POST', '/edge/api/v1/functions', {
        apiKey: created.api_key,
        body: { name: 'tick', steps: [{ name: 'out', kind: 'Transform', expression: { ok: true } }] },
      });
      expect(fn.status).toBe(201);
      const cron = await call('POST', '/edge/api/v1/cron', {
        apiKey: created.api_key,
        body: { name: 'every-second', schedule: '* * * * * *', timezone: 'UTC', function: 'tick' },
      });
      expect(cron.status).toBe(201);
      return created.id as string;
    };
    const suspended = await project('cron-suspended@example.com');
    const neighbour = await project('cron-neighbour@example.com');
    const db = new pg.Client({ connectionString: p.databaseUrl });
    await db.connect();
    try {
      const runs = async (projectId: string) =>
        Number(
          (
            await db.query(
              "select count(*)::int as n from function_executions where project_id = $1 and trigger = 'cron'",
              [projectId],
            )
          ).rows[0].n,
        );
      await waitFor(async () => (await runs(suspended)) >= 1, { timeoutMs: 30_000, message: 'a first cron run' });
      expect((await op('POST', `/projects/${suspended}/suspend`, {})).status).toBe(200);
      // A tick that had started before the suspension may still finish: count after the neighbour's next run.
      const n0 = await runs(neighbour);
      await waitFor(async () => (await runs(neighbour)) >= n0 + 1, { timeoutMs: 30_000, message: 'a neighbour run' });
      const frozen = await runs(suspended);
      const n1 = await runs(neighbour);
      await waitFor(async () => (await runs(neighbour)) >= n1 + 3, {
        timeoutMs: 30_000,
        message: 'three more neighbour runs',
      });
      expect(await runs(suspended)).toBe(frozen);
      expect((await op('POST', `/projects/${suspended}/resume`)).status).toBe(200);
      await waitFor(async () => (await runs(suspended)) > frozen, { timeoutMs: 30_000, message: 'a run after resume' });
    } finally {
      await db.end();
    }
  }, 120_000);

  it('refuses an async run queued before its project was suspended when it comes up, recorded as PROJECT_SUSPENDED', async () => {
    const op = (method: string, path: string, body?: unknown) =>
      call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });
    // A server that holds every request until released: runs calling it occupy the scheduler's slots.
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const release = () => {
      for (const res of held.splice(0)) res.end('{}');
    };
    const db = new pg.Client({ connectionString: p.databaseUrl });
    await db.connect();
    try {
      const email = 'queued@example.com';
      await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
      const t = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: PASSWORD } })).body
        .access_token;
      const project = (await call('POST', '/auth/api/v1/projects', { token: t, body: { name: 'Queued' } })).body
        .project;
      const apiKey = project.api_key as string;
      const fn = await call('POST', '/edge/api/v1/functions', {
        apiKey,
        body: {
          name: 'slow',
          steps: [{ name: 'wait', kind: 'HTTP', request: { method: 'GET', url, timeout_ms: 60_000 } }],
        },
      });
      expect(fn.status).toBe(201);
      const invoke = async () => {
        const res = await call('POST', '/edge/api/v1/invoke/slow?async=true', { apiKey, body: {} });
        expect(res.status).toBe(202);
        return res.body.execution_id as string;
      };
      // Fill every slot of the scheduler (one job each), then queue one more: it waits for a slot.
      const SLOTS = 20;
      for (let i = 0; i < SLOTS; i++) await invoke();
      await waitFor(async () => held.length >= SLOTS, { timeoutMs: 60_000, message: 'every slot running' });
      const queued = await invoke();
      const statusOf = async () =>
        (
          await db.query<{ status: string; error: { code?: string } | null }>(
            'select status, error from function_executions where id = $1',
            [queued],
          )
        ).rows[0];
      expect((await statusOf())?.status).toBe('queued');
      expect((await op('POST', `/projects/${project.id}/suspend`, {})).status).toBe(200);
      release();
      const done = await waitFor(
        async () => {
          release();
          const row = await statusOf();
          return row && row.status !== 'queued' && row.status !== 'running' && row;
        },
        { timeoutMs: 60_000, message: 'the queued run to come up' },
      );
      expect(done).toMatchObject({ status: 'failed', error: { code: 'PROJECT_SUSPENDED' } });
      await op('POST', `/projects/${project.id}/resume`);
    } finally {
      release();
      await db.end();
      await new Promise((r) => server.close(r));
    }
  }, 180_000);
});
