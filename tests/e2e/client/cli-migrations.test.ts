// Migrations through the `tessera` CLI against a live Tessera, run as a user runs it (a child process in the project's
// folder): `migration new` makes timestamped files in tessera/migrations, `db push` applies the pending ones in order
// (a second push is a no-op), a changed applied file is refused by name, a failing migration is rolled back whole and
// stops the push, `migration list` shows local against applied with checksums, and `db pull` writes the schema as a
// migration that, pushed to a fresh project, gives it the same schema (`db dump --schema` of both are equal).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { runCli, type CliRun } from '../../support/cli.ts';

let platform: TestPlatform;
let dir: string;
let configDir: string;
/** The project's folder (the CLI runs there) and a second one for the fresh project. */
let appDir: string;
let freshDir: string;
const email = `cli-mig-${Date.now()}@example.com`;
const password = 'correct horse battery staple';
let projectA: { id: string; api_key: string };
let projectB: { id: string; api_key: string };

/** Runs `tessera args...` in `cwd` with the test's config folder and address. */
function tessera(args: string[], opts: { cwd?: string; input?: string } = {}): Promise<CliRun> {
  return runCli(args, { url: platform.url, home: dir, configDir, cwd: opts.cwd ?? appDir, input: opts.input });
}

const migrationsOf = (folder: string) => path.join(folder, 'tessera', 'migrations');
const files = (folder: string) =>
  fs.existsSync(migrationsOf(folder)) ? fs.readdirSync(migrationsOf(folder)).sort() : [];
const sha = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
/** Rows of a query on project A, through the CLI. */
const query = async (sql: string, project = projectA.id) => {
  const r = await tessera(['db', 'sql', '-', '--project', project, '--json'], { input: sql });
  expect([r.code, r.stderr]).toEqual([0, '']);
  return r.json().rows as Record<string, unknown>[];
};
const tablesOf = async (project = projectA.id) =>
  (
    await query(
      "select table_name from information_schema.tables where table_schema = current_schema() and table_name <> 'tessera_migrations' order by 1",
      project,
    )
  ).map((r) => r.table_name);

beforeAll(async () => {
  platform = await startOneProcess();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-cli-mig-'));
  configDir = path.join(dir, 'config');
  appDir = path.join(dir, 'app');
  freshDir = path.join(dir, 'fresh');
  fs.mkdirSync(appDir);
  fs.mkdirSync(freshDir);
  const call = client(platform.url);
  expect((await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } })).status).toBe(201);
  const login = await tessera(['login', '--email', email, '--password-stdin'], { input: password });
  expect([login.code, login.stderr]).toEqual([0, '']);
  projectA = (await tessera(['projects', 'create', 'Migrated', '--json'])).json();
  projectB = (await tessera(['projects', 'create', 'Fresh', '--json'])).json();
  expect((await tessera(['projects', 'use', projectA.id])).code).toBe(0);
}, 90_000);

afterAll(async () => {
  await platform?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const CREATE_POSTS = `create table posts (
  id serial primary key,
  title text not null,
  published boolean not null default false
);
insert into posts (title, published) values ('hello', true);
`;
const ADD_POLICY = `alter table posts enable row level security;
create policy read_published on posts for select using (published);
create index posts_title on posts (title);
`;

describe('tessera migration and db push / pull / dump', () => {
  it('makes timestamped migration files in tessera/migrations', async () => {
    const first = await tessera(['migration', 'new', 'create posts']);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.stdout).toMatch(/Created new migration at tessera\/migrations\/\d{14}_create_posts\.sql/);
    const second = await tessera(['migration', 'new', 'add_policy', '--json']);
    expect(second.json()).toMatchObject({ name: 'add_policy', version: expect.stringMatching(/^\d{14}$/) });
    const names = files(appDir);
    expect(names).toHaveLength(2);
    expect(names[0]).toMatch(/^\d{14}_create_posts\.sql$/);
    expect(names[1]).toMatch(/^\d{14}_add_policy\.sql$/);
    // The version is the UTC time of creation (two made in one second still differ and keep their order).
    const now = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 8);
    expect(names[0]!.slice(0, 8)).toBe(now);
    expect(names[0]! < names[1]!).toBe(true);
    fs.writeFileSync(path.join(migrationsOf(appDir), names[0]!), CREATE_POSTS);
    fs.writeFileSync(path.join(migrationsOf(appDir), names[1]!), ADD_POLICY);
    expect((await tessera(['migration', 'new'])).code).toBe(2);
  });

  it('lists both as pending, pushes them in order, and lists them applied with their checksums', async () => {
    const before = (await tessera(['migration', 'list', '--json'])).json();
    expect(before.migrations.map((m: { status: string }) => m.status)).toEqual(['pending', 'pending']);
    const dry = await tessera(['db', 'push', '--dry-run']);
    expect(dry.stdout).toContain('Would apply');
    expect(await tablesOf()).toEqual([]);
    const push = await tessera(['db', 'push']);
    expect(push.code).toBe(0);
    expect(push.stdout).toContain('Applied 2 migration(s)');
    expect(push.stderr).toMatch(
      /Applying migration \d{14}_create_posts\.sql[\s\S]*Applying migration \d{14}_add_policy\.sql/,
    );
    expect(await tablesOf()).toEqual(['posts']);
    const after = (await tessera(['migration', 'list', '--json'])).json();
    expect(after.migrations).toEqual([
      expect.objectContaining({
        name: 'create_posts',
        status: 'applied',
        checksum: sha(CREATE_POSTS),
        appliedChecksum: sha(CREATE_POSTS),
      }),
      expect.objectContaining({
        name: 'add_policy',
        status: 'applied',
        checksum: sha(ADD_POLICY),
        appliedChecksum: sha(ADD_POLICY),
      }),
    ]);
    const human = await tessera(['migration', 'list']);
    expect(human.stdout).toContain(sha(CREATE_POSTS).slice(0, 12));
    expect(human.stdout).toMatch(/create_posts.*applied/);
  });

  it('pushes nothing the second time', async () => {
    const again = await tessera(['db', 'push']);
    expect([again.code, again.stdout.trim()]).toEqual([0, 'Up to date: nothing to push']);
    expect(await query('select count(*)::int as n from posts')).toEqual([{ n: 1 }]);
  });

  it('refuses to push when an applied file was edited, naming it, and applies nothing', async () => {
    const [createPosts] = files(appDir);
    const file = path.join(migrationsOf(appDir), createPosts!);
    fs.writeFileSync(file, `${CREATE_POSTS}alter table posts add column sneaky text;\n`);
    const later = await tessera(['migration', 'new', 'later']);
    expect(later.code).toBe(0);
    fs.writeFileSync(path.join(migrationsOf(appDir), files(appDir)[2]!), 'create table later_one (id int);\n');
    const push = await tessera(['db', 'push']);
    expect(push.code).toBe(6);
    expect(push.stderr).toContain(
      `Migration ${createPosts} was applied with checksum ${sha(CREATE_POSTS).slice(0, 12)}`,
    );
    expect(push.stderr).toContain('Nothing was applied');
    expect(await tablesOf()).toEqual(['posts']);
    const list = (await tessera(['migration', 'list', '--json'])).json();
    expect(list.migrations.map((m: { status: string }) => m.status)).toEqual(['changed', 'applied', 'pending']);
    fs.writeFileSync(file, CREATE_POSTS);
    const fixed = await tessera(['db', 'push']);
    expect([fixed.code, fixed.stdout.trim()]).toEqual([0, 'Applied 1 migration(s)']);
    expect(await tablesOf()).toEqual(['later_one', 'posts']);
  });

  it('rolls a failing migration back whole and stops the push there', async () => {
    expect((await tessera(['migration', 'new', 'broken'])).code).toBe(0);
    const broken = files(appDir)[3]!;
    fs.writeFileSync(
      path.join(migrationsOf(appDir), broken),
      "create table half_made (id int);\ninsert into posts (title) values ('kept?');\ninsert into posts (id, title) values (1, 'duplicate key');\n",
    );
    expect((await tessera(['migration', 'new', 'after broken'])).code).toBe(0);
    fs.writeFileSync(path.join(migrationsOf(appDir), files(appDir)[4]!), 'create table after_broken (id int);\n');
    const push = await tessera(['db', 'push']);
    expect(push.code).toBe(6); // a unique violation is a conflict
    expect(push.stderr).toContain(`Migration ${broken} failed and was rolled back`);
    expect(push.stderr).toMatch(/statement 3 \(line 3\)/);
    expect(await tablesOf()).toEqual(['later_one', 'posts']);
    expect(await query('select count(*)::int as n from posts')).toEqual([{ n: 1 }]);
    const list = (await tessera(['migration', 'list', '--json'])).json();
    expect(list.migrations.map((m: { status: string }) => m.status)).toEqual([
      'applied',
      'applied',
      'applied',
      'pending',
      'pending',
    ]);
    // Fixed, the push goes on from there.
    fs.writeFileSync(path.join(migrationsOf(appDir), broken), 'create table half_made (id int);\n');
    const push2 = await tessera(['db', 'push']);
    expect([push2.code, push2.stdout.trim()]).toEqual([0, 'Applied 2 migration(s)']);
    expect(await tablesOf()).toEqual(['after_broken', 'half_made', 'later_one', 'posts']);
  });

  it('pulls the schema as a migration that gives a fresh project the same schema', async () => {
    const dumpFile = path.join(dir, 'a.sql');
    const dump = await tessera(['db', 'dump', '--schema', '-o', dumpFile]);
    expect([dump.code, dump.stderr]).toEqual([0, '']);
    const schemaA = fs.readFileSync(dumpFile, 'utf8');
    expect(schemaA).toContain('create policy "read_published" on "posts"');
    expect(schemaA).not.toContain('tessera_migrations');
    const pull = await tessera(['db', 'pull']);
    expect(pull.code).toBe(0);
    expect(pull.stdout).toMatch(
      /Wrote tessera\/migrations\/\d{14}_remote_schema\.sql \(recorded as applied on the project\)/,
    );
    const pulled = files(appDir).at(-1)!;
    expect(fs.readFileSync(path.join(migrationsOf(appDir), pulled), 'utf8')).toBe(schemaA);
    // Recorded as applied: nothing to push on the project it came from.
    expect((await tessera(['db', 'push'])).stdout.trim()).toBe('Up to date: nothing to push');
    // A fresh project's folder with only the pulled file: pushed, it has the same schema.
    fs.mkdirSync(migrationsOf(freshDir), { recursive: true });
    fs.copyFileSync(path.join(migrationsOf(appDir), pulled), path.join(migrationsOf(freshDir), pulled));
    const pushB = await tessera(['db', 'push', '--project', projectB.id], { cwd: freshDir });
    expect([pushB.code, pushB.stdout.trim()]).toEqual([0, 'Applied 1 migration(s)']);
    const dumpB = await tessera(['db', 'dump', '--schema', '--project', projectB.id], { cwd: freshDir });
    expect(dumpB.code).toBe(0);
    expect(dumpB.stdout).toBe(schemaA);
    expect(await tablesOf(projectB.id)).toEqual(['after_broken', 'half_made', 'later_one', 'posts']);
  });

  it('asks for --schema on dump and refuses an unknown db subcommand', async () => {
    expect((await tessera(['db', 'dump'])).code).toBe(2);
    expect((await tessera(['db', 'diff'])).code).toBe(2);
  });
});
