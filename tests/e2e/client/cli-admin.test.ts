// `tessera admin` against a live Tessera started with TESSERA_OPERATOR_KEY, run as an operator runs it (a child
// process): plans created, updated and made the default; a tenant moved to a plan; a project and a tenant suspended
// (their calls refused with PROJECT_SUSPENDED / TENANT_SUSPENDED) and resumed; the audit listing each action; operator
// keys created, used and revoked; and what is refused: no key, a tenant's token as the key, an unknown limit name.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { runCli, type CliRun } from '../../support/cli.ts';
import { startPgServer } from '../../support/pg-servers.ts';
import { waitFor } from '../../support/wait-for.ts';
import { put } from '../storage/storage-fixtures.ts';

const OPERATOR_KEY = `top_${randomBytes(32).toString('base64url')}`;

let platform: TestPlatform;
let dir: string;
let call: ReturnType<typeof client>;
const tenant = { email: `cli-admin-${Date.now()}@example.com`, password: 'correct horse battery staple' };
let token = '';
let tenantId = '';
let projectId = '';
let apiKey = '';

/** Runs `tessera args...` as the operator (TESSERA_OPERATOR_KEY set unless `env` says otherwise). */
function tessera(
  args: string[],
  env: Record<string, string> = { TESSERA_OPERATOR_KEY: OPERATOR_KEY },
): Promise<CliRun> {
  return runCli(args, { url: platform.url, home: dir, configDir: path.join(dir, 'config'), env });
}

beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_OPERATOR_KEY: OPERATOR_KEY });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-cli-admin-'));
  call = client(platform.url);
  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: tenant });
  tenantId = signup.body.tenant.id;
  token = (await call('POST', '/auth/api/v1/tenant/login', { body: tenant })).body.access_token;
  const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Watched' } });
  projectId = created.body.project.id;
  apiKey = created.body.project.api_key;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('tessera admin', () => {
  it('needs an operator key, and refuses a tenant token given as one', async () => {
    const none = await tessera(['admin', 'plans', 'list'], {});
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('TESSERA_OPERATOR_KEY');
    const tenantToken = await tessera(['admin', 'plans', 'list', '--operator-key', token], {});
    expect(tenantToken.code).toBe(4);
    expect(tenantToken.stderr).toContain('FORBIDDEN');
    // The tenant's saved credentials are never read or written by admin commands.
    expect(fs.existsSync(path.join(dir, 'config', 'credentials.json'))).toBe(false);
  });

  it('lists the plans, "unlimited" for no limit, the default marked', async () => {
    const human = await tessera(['admin', 'plans', 'list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/self-hosted\s+Self-hosted/);
    expect(human.stdout).toContain('unlimited');
    const json = (await tessera(['admin', 'plans', 'list', '--json'])).json();
    const ids = json.map((p: { id: string }) => p.id);
    expect(ids).toEqual(expect.arrayContaining(['free', 'pro', 'enterprise', 'self-hosted']));
    expect(json.find((p: { id: string }) => p.id === 'free').default).toBe(true);
    expect(json.find((p: { id: string }) => p.id === 'self-hosted').limits.max_projects).toBeNull();
  });

  it('creates and updates a plan with --limit key=value (sizes, none) and --price; an unknown limit names the valid ones', async () => {
    const bad = await tessera(['admin', 'plans', 'create', 'hobby', '--name', 'Hobby', '--limit', 'max_cron=2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown limit "max_cron"');
    expect(bad.stderr).toContain('max_cron_jobs');
    const notNumber = await tessera([
      'admin',
      'plans',
      'create',
      'hobby',
      '--name',
      'Hobby',
      '--limit',
      'max_cron_jobs=two',
    ]);
    expect(notNumber.code).toBe(2);
    const created = await tessera([
      'admin',
      'plans',
      'create',
      'hobby',
      '--name',
      'Hobby',
      '--description',
      'For a weekend project',
      '--price',
      '500',
      '--limit',
      'max_cron_jobs=2',
      '--limit',
      'max_storage_bytes=1GiB',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const plan = created.json();
    expect(plan).toMatchObject({ id: 'hobby', name: 'Hobby', price_cents_per_month: 500, tenant_count: 0 });
    expect(plan.limits).toMatchObject({ max_cron_jobs: 2, max_storage_bytes: 1024 ** 3 });
    const taken = await tessera(['admin', 'plans', 'create', 'hobby', '--name', 'Again']);
    expect(taken.code).toBe(6);
    const updated = await tessera([
      'admin',
      'plans',
      'update',
      'hobby',
      '--limit',
      'max_cron_jobs=none',
      '--limit',
      'min_cron_interval_seconds=30',
      '--price',
      'none',
      '--json',
    ]);
    expect(updated.code).toBe(0);
    expect(updated.json().limits).toMatchObject({ max_cron_jobs: null, min_cron_interval_seconds: 30 });
    expect(updated.json().price_cents_per_month).toBeNull();
    const shown = await tessera(['admin', 'plans', 'show', 'hobby']);
    expect(shown.stdout).toMatch(/max_cron_jobs\s+unlimited/);
    expect(shown.stdout).toMatch(/min_cron_interval_seconds\s+30 s/);
    expect(shown.stdout).not.toContain('price:');
    expect((await tessera(['admin', 'plans', 'update', 'hobby'])).code).toBe(2);
  });

  it('sets the default plan: the next sign-up starts on it', async () => {
    const set = await tessera(['admin', 'plans', 'default', 'hobby', '--json']);
    expect(set.code).toBe(0);
    expect(set.json()).toEqual({ default_plan: 'hobby', default_plan_source: 'operator' });
    expect((await tessera(['admin', 'plans', 'default'])).stdout).toContain('hobby');
    const next = { email: `cli-admin-next-${Date.now()}@example.com`, password: tenant.password };
    await call('POST', '/auth/api/v1/tenants/signup', { body: next });
    const t = await call('POST', '/auth/api/v1/tenant/login', { body: next });
    expect(t.body.tenant.plan.id).toBe('hobby');
    expect((await tessera(['admin', 'plans', 'default', 'free'])).code).toBe(0);
  });

  it('moves a tenant to a plan; a plan in use is not deleted', async () => {
    const listed = (await tessera(['admin', 'tenants', 'list', '--search', tenant.email, '--json'])).json();
    expect(listed.tenants.map((t: { id: string }) => t.id)).toEqual([tenantId]);
    expect(listed.tenants[0]).toMatchObject({ email: tenant.email, project_count: 1, suspended_at: null });
    const moved = await tessera(['admin', 'tenants', 'plan', tenantId, 'hobby']);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain('Hobby');
    expect((await call('GET', '/auth/api/v1/tenant', { token })).body.tenant.plan.id).toBe('hobby');
    const inUse = await tessera(['admin', 'plans', 'delete', 'hobby', '--yes']);
    expect(inUse.code).toBe(6);
    expect(inUse.stderr).toContain('PLAN_IN_USE');
    expect((await tessera(['admin', 'tenants', 'plan', tenantId, 'no-such-plan'])).code).toBe(5);
  });

  it('suspends a project: its calls answer PROJECT_SUSPENDED until it is resumed, its data kept', async () => {
    const before = await call('GET', '/storage/api/v1/storage/policies', { apiKey });
    expect(before.status).toBe(200);
    const listed = (await tessera(['admin', 'projects', 'list', '--tenant', tenantId, '--json'])).json();
    expect(listed.projects.map((p: { id: string }) => p.id)).toEqual([projectId]);
    const suspended = await tessera(['admin', 'projects', 'suspend', projectId, '--reason', 'abuse report', '--yes']);
    expect(suspended.code).toBe(0);
    const refused = await call('GET', '/storage/api/v1/storage/policies', { apiKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('PROJECT_SUSPENDED');
    const shown = await tessera(['admin', 'projects', 'show', projectId]);
    expect(shown.stdout).toContain('abuse report');
    expect(shown.stdout).toMatch(/storage:\s+0 B in 0 files/);
    expect(shown.stdout).toMatch(/database:\s+\d+ rows, \d[\d.]* [KMG]?i?B/);
    expect(shown.stdout).toMatch(/functions:\s+0 runs\/month, 0 running, 0 cron/);
    expect((await tessera(['admin', 'projects', 'resume', projectId])).code).toBe(0);
    const after = await call('GET', '/storage/api/v1/storage/policies', { apiKey });
    expect(after.status).toBe(200);
  });

  it('suspends a tenant: its sign-in answers TENANT_SUSPENDED until it is resumed', async () => {
    expect((await tessera(['admin', 'tenants', 'suspend', tenantId, '--reason', 'unpaid', '--yes'])).code).toBe(0);
    const login = await call('POST', '/auth/api/v1/tenant/login', { body: tenant });
    expect(login.status).toBe(403);
    expect(login.body.error.code).toBe('TENANT_SUSPENDED');
    expect((await call('GET', '/storage/api/v1/storage/policies', { apiKey })).status).toBe(403);
    expect((await tessera(['admin', 'tenants', 'resume', tenantId])).code).toBe(0);
    expect((await call('POST', '/auth/api/v1/tenant/login', { body: tenant })).status).toBe(200);
  });

  it("shows a tenant's usage (all its projects together) in its row, as text and with --json", async () => {
    for (const sql of ['create table cli_items (n int)', 'insert into cli_items select g from generate_series(1, 3) g'])
      expect((await call('POST', '/v1/rawSQL', { apiKey, body: { sql } })).status).toBe(200);
    const file = await put(platform.url, { id: projectId, apiKey, tenantToken: token }, '', 'note.txt', 'twelve bytes');
    expect(file.status).toBe(201);
    // The database's statistics see the rows about a second after they are written.
    const shown = await waitFor(
      async () => {
        const run = await tessera(['admin', 'tenants', 'show', tenantId]);
        return /database:\s+3 rows, /.test(run.stdout) && run;
      },
      { timeoutMs: 30_000, message: 'the tenant row to show its 3 rows' },
    );
    expect(shown.stdout).toMatch(/storage:\s+12 B in 1 files/);
    expect(shown.stdout).toMatch(/functions:\s+0 runs\/month, 0 running, 0 cron/);
    const listed = (await tessera(['admin', 'tenants', 'list', '--search', tenant.email, '--json'])).json();
    expect(listed.tenants[0]).toMatchObject({
      project_count: 1,
      storage_usage: { objects: 1, bytes: 12, pending_objects: 0, pending_bytes: 0 },
      database_usage: { rows: 3, unmeasured: 0 },
      function_usage: { runs_this_month: 0, running_now: 0, cron_jobs: 0 },
    });
    const table = (await tessera(['admin', 'tenants', 'list', '--search', tenant.email])).stdout;
    expect(table).toContain('12 B in 1 files');
    expect(table).toMatch(/3 rows, \d/);
  });

  it('lists every action in the audit, filtered by action', async () => {
    const all = (await tessera(['admin', 'audit', '--json'])).json();
    const actions: string[] = all.entries.map((e: { action: string }) => e.action);
    for (const a of [
      'plan.create',
      'plan.update',
      'tenant.plan',
      'project.suspend',
      'project.resume',
      'tenant.suspend',
      'tenant.resume',
    ])
      expect(actions.some((x) => x.startsWith(a))).toBe(true);
    expect(all.entries.every((e: { operator: string }) => e.operator === 'bootstrap')).toBe(true);
    const filtered = (await tessera(['admin', 'audit', '--action', 'project.suspend', '--json'])).json();
    expect(filtered.entries.length).toBeGreaterThan(0);
    expect(filtered.entries.every((e: { action: string; target_id: string }) => e.action === 'project.suspend')).toBe(
      true,
    );
    expect(filtered.entries[0].target_id).toBe(projectId);
    const human = await tessera(['admin', 'audit']);
    expect(human.stdout).toMatch(/bootstrap\s+project\.suspend/);
  });

  it('registers, lists, changes and removes a project server; the URL password is never printed', async () => {
    // A throwaway PostgreSQL server whose superuser has a random password (the platform's own URL may have a password
    // as plain as its user name, which the answers show: "tessera:tessera" in CI).
    const pg2 = await startPgServer();
    try {
      await registerServer(pg2.url);
    } finally {
      await pg2.stop();
    }
  });

  /** Registers, lists, changes and removes the server at `url` with the CLI; its password is never printed. */
  async function registerServer(url: string): Promise<void> {
    const secret = decodeURIComponent(new URL(url).password);
    const added = await tessera([
      'admin',
      'servers',
      'add',
      'cli-pg',
      '--database-url',
      url,
      '--weight',
      '2',
      '--state',
      'read-only',
    ]);
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('Registered project server cli-pg');
    const listed = await tessera(['admin', 'servers', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/default\s+active\s+1\s+1\s+up \(PostgreSQL/);
    expect(listed.stdout).toMatch(/cli-pg\s+read-only\s+2\s+0\s+up/);
    const shown = (await tessera(['admin', 'servers', 'show', 'cli-pg', '--json'])).json();
    expect(shown).toMatchObject({ id: 'cli-pg', state: 'read-only', weight: 2, built_in: false, projects: 0 });
    expect(shown.health.reachable).toBe(true);
    const set = await tessera(['admin', 'servers', 'set', 'cli-pg', '--state', 'draining', '--weight', '0', '--json']);
    expect(set.json()).toMatchObject({ state: 'draining', weight: 0 });
    expect((await tessera(['admin', 'servers', 'set', 'cli-pg'])).code).toBe(2);
    expect((await tessera(['admin', 'servers', 'set', 'cli-pg', '--state', 'asleep'])).code).toBe(2);
    expect((await tessera(['admin', 'servers', 'add', 'cli-bad'])).code).toBe(2);
    const unreachable = await tessera([
      'admin',
      'servers',
      'add',
      'cli-bad',
      '--database-url',
      'postgres://u:pw@127.0.0.1:1/postgres',
    ]);
    expect(unreachable.code).toBe(7);
    expect(unreachable.stderr).toMatch(/url/);
    // The default server holds this test's project: it cannot be removed, nor can any server holding projects.
    const inUse = await tessera(['admin', 'servers', 'remove', 'default', '--yes']);
    expect(inUse.code).toBe(6);
    expect((await tessera(['admin', 'servers', 'remove', 'cli-pg', '--yes'])).code).toBe(0);
    expect((await tessera(['admin', 'servers', 'show', 'cli-pg'])).code).toBe(5);
    const shownProject = await tessera(['admin', 'projects', 'show', projectId]);
    expect(shownProject.stdout).toMatch(/server:\s+default/);
    for (const r of [added, listed, set]) expect(r.stdout + r.stderr).not.toContain(secret);
  }

  it('creates an operator key that works, then revokes it: it is refused at once', async () => {
    const created = await tessera(['admin', 'keys', 'create', 'ci', '--json']);
    expect(created.code).toBe(0);
    const key = created.json();
    expect(key.key).toMatch(/^top_/);
    const withIt = await tessera(['admin', 'plans', 'list', '--operator-key', key.key], {});
    expect(withIt.code).toBe(0);
    const keys = (await tessera(['admin', 'keys', 'list', '--json'])).json();
    expect(keys.find((k: { id: string }) => k.id === key.id)).toMatchObject({ name: 'ci', revoked_at: null });
    expect(JSON.stringify(keys)).not.toContain(key.key);
    expect((await tessera(['admin', 'keys', 'revoke', key.id, '--yes'])).code).toBe(0);
    expect((await tessera(['admin', 'plans', 'list', '--operator-key', key.key], {})).code).toBe(3);
  });
});
