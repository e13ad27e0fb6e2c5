// The `tessera` CLI against a live Tessera, run as a user runs it (a child process): login with MFA, projects, keys,
// OIDC clients, functions deploy (a folder of JSON and YAML definitions, with its progress bar), invoke, delete,
// secrets, executions list/show/tail, db sql from a file and stdin, storage ls/cp/rm, gen types; --json output;
// exit codes; credentials kept with mode 0600.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'otplib';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { runCli, type CliRun } from '../../support/cli.ts';
import { nextCode } from '../../support/totp.ts';

let platform: TestPlatform;
let dir: string;
let configDir: string;
const email = `cli-${Date.now()}@example.com`;
const password = 'correct horse battery staple';
let mfaSecret = '';
/** The recovery codes shown when MFA was turned on, and the last TOTP code used. */
let recoveryCodes: string[] = [];
let lastTotp = '';

/** Runs `tessera args...` with the test's config folder and address; `input` goes to stdin. */
function tessera(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  return runCli(args, { url: platform.url, home: dir, configDir, ...opts });
}

beforeAll(async () => {
  platform = await startOneProcess();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-cli-'));
  configDir = path.join(dir, 'config');
  const call = client(platform.url);
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } });
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  const token = login.body.access_token as string;
  mfaSecret = (await call('POST', '/auth/api/v1/tenant/mfa/enroll', { token })).body.secret;
  recoveryCodes = (
    await call('POST', '/auth/api/v1/tenant/mfa/verify', {
      token,
      body: { code: await generate({ secret: mfaSecret }) },
    })
  ).body.recovery_codes;
}, 60_000);

afterAll(async () => {
  await platform?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Each test runs the CLI as a process per command (a Node start-up each, about a second on a loaded machine): the one
// with ~25 commands outran Jest's default 30 s in a CI run.
jest.setTimeout(120_000);

describe('tessera', () => {
  it('answers --version and --help, and exit code 2 for a bad command line', async () => {
    expect((await tessera(['--version'])).stdout.trim()).toBe('0.1.0');
    const help = await tessera(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('tessera functions deploy');
    expect((await tessera(['frobnicate'])).code).toBe(2);
    expect((await tessera(['projects', '--no-such-flag'])).code).toBe(2);
    expect((await tessera([])).code).toBe(2);
  });

  it('refuses project commands before login with exit code 3', async () => {
    const r = await tessera(['projects', 'list']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Not logged in/);
  });

  it('logs in with MFA (the password from stdin), keeping the credentials readable by the user only', async () => {
    const noCode = await tessera(['login', '--email', email, '--password-stdin'], { input: `${password}\n` });
    expect(noCode.code).toBe(3);
    expect(noCode.stderr).toMatch(/--totp/);
    const wrong = await tessera(['login', '--email', email, '--password', 'wrong password!!']);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/INVALID_CREDENTIALS/);
    expect(wrong.stderr).toMatch(/request /);
    lastTotp = await generate({ secret: mfaSecret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const ok = await tessera(['login', '--email', email, '--password-stdin', '--totp', lastTotp], { input: password });
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect(ok.stdout).toContain(`Logged in to ${platform.url} as ${email}`);
    const file = path.join(configDir, 'credentials.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(configDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ url: platform.url, email });
    const me = await tessera(['whoami', '--json']);
    expect(me.json()).toMatchObject({ email, mfa_enabled: true });
  });

  it('manages projects, keys and OIDC clients', async () => {
    const created = await tessera(['projects', 'create', 'CLI app', '--json']);
    expect(created.code).toBe(0);
    const p = created.json();
    expect(p.api_key).toMatch(/^tsk_/);
    expect(p.publishable_key).toMatch(/^tpk_/);
    const spare = (await tessera(['projects', 'create', 'Spare', '--json'])).json();
    // Two projects and no default: the command asks which.
    expect((await tessera(['keys', 'show'])).code).toBe(2);
    expect((await tessera(['projects', 'use', p.id])).code).toBe(0);
    const list = await tessera(['projects', 'list']);
    expect(list.stdout).toMatch(/\*\s+\S+\s+CLI app/);
    const keys = (await tessera(['keys', 'show', '--json'])).json();
    expect(keys).toEqual({ project_id: p.id, api_key: p.api_key, publishable_key: p.publishable_key });
    expect((await tessera(['keys', 'regenerate', '--publishable'])).code).toBe(2); // no terminal to confirm on: needs --yes
    const regen = (await tessera(['keys', 'regenerate', '--publishable', '--yes', '--json'])).json();
    expect(regen.publishable_key).not.toBe(p.publishable_key);
    expect((await tessera(['projects', 'rename', spare.id, 'Spare 2', '--json'])).json().name).toBe('Spare 2');
    expect((await tessera(['projects', 'delete', spare.id, '--yes'])).code).toBe(0);
    expect((await tessera(['projects', 'rename', spare.id, 'gone'])).code).toBe(5);
    const clients = (await tessera(['clients', 'list', '--json'])).json();
    expect(clients).toHaveLength(1);
    const updated = await tessera([
      'clients',
      'update',
      clients[0].client_id,
      '--redirect-uri',
      'https://app.example.com/cb',
      '--public',
      'true',
      '--json',
    ]);
    expect(updated.json()).toMatchObject({ public: true, redirect_uris: ['https://app.example.com/cb'] });
    expect((await tessera(['clients', 'update', clients[0].client_id, '--public', 'maybe'])).code).toBe(2);
    expect(
      (await tessera(['clients', 'rotate-secret', clients[0].client_id, '--yes', '--json'])).json().client_secret,
    ).toMatch(/^tss_/);
    // More clients: create with grant types and scopes, change them, delete (asks first, like every deletion).
    const worker = await tessera([
      'clients',
      'create',
      'Worker',
      '--grant-types',
      'client_credentials',
      '--scopes',
      'admin:sql',
      '--json',
    ]);
    expect(worker.code).toBe(0);
    expect(worker.json()).toMatchObject({
      name: 'Worker',
      grant_types: ['client_credentials'],
      allowed_scopes: ['admin:sql'],
    });
    const workerId = worker.json().client_id as string;
    const bad = await tessera(['clients', 'update', workerId, '--grant-types', 'implicit']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('grantTypes[0]');
    expect(
      (
        await tessera(['clients', 'update', workerId, '--grant-types', 'client_credentials,refresh_token', '--json'])
      ).json().grant_types,
    ).toEqual(['client_credentials', 'refresh_token']);
    expect((await tessera(['clients', 'list'])).stdout).toContain('client_credentials,refresh_token');
    expect((await tessera(['clients', 'delete', workerId])).code).toBe(2); // no terminal to confirm on: needs --yes
    expect((await tessera(['clients', 'delete', workerId, '--yes'])).code).toBe(0);
    expect((await tessera(['clients', 'list', '--json'])).json()).toHaveLength(1);
  });

  it('deploys a folder of JSON and YAML function definitions with a progress bar, invokes, lists and deletes', async () => {
    const fns = path.join(dir, 'functions');
    fs.mkdirSync(fns);
    fs.writeFileSync(
      path.join(fns, 'hello.json'),
      JSON.stringify({
        name: 'hello',
        steps: [{ name: 'say', kind: 'Transform', expression: { hi: '{{ input.body.name }}' } }],
      }),
    );
    fs.writeFileSync(
      path.join(fns, 'more.yaml'),
      [
        '- name: double',
        '  public: true',
        '  steps:',
        '    - name: calc',
        '      kind: Transform',
        '      expression: "{{ input.body.n * 2 }}"',
        '- name: fail',
        '  steps:',
        '    - name: boom',
        '      kind: Transform',
        '      expression: { error: "NOPE", status: 422 }',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(fns, 'README.md'), 'not a definition');
    const deployed = await tessera(['functions', 'deploy', fns], { env: { TESSERA_PROGRESS: '1' } });
    expect([deployed.code, deployed.stdout]).toEqual([
      0,
      'created hello (version 1)\ncreated double (version 1)\ncreated fail (version 1)\n',
    ]);
    expect(deployed.stderr).toMatch(/deploying \[#+\] 100% 3\/3/);
    const again = await tessera(['functions', 'deploy', path.join(fns, 'hello.json'), '--json']);
    expect(again.json()).toEqual([expect.objectContaining({ name: 'hello', version: 2, created: false })]);
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, 'name: [unclosed');
    expect((await tessera(['functions', 'deploy', bad])).code).toBe(2);
    fs.writeFileSync(bad, 'name: "bad name!"\nsteps: []');
    const refused = await tessera(['functions', 'deploy', bad]);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/VALIDATION_FAILED/);
    expect((await tessera(['functions', 'list', '--json'])).json().map((f: { name: string }) => f.name)).toEqual([
      'double',
      'fail',
      'hello',
    ]);
    const out = await tessera(['functions', 'invoke', 'hello', '--data', '{"name": "cli"}', '--json']);
    expect(out.json()).toMatchObject({ status: 200, output: { hi: 'cli' } });
    const fromStdin = await tessera(['functions', 'invoke', 'double', '--data-file', '-'], { input: '{"n": 21}' });
    expect(fromStdin.stdout.trim()).toBe('42');
    const dry = await tessera(['functions', 'invoke', 'hello', '--dry-run', '--json']);
    expect(dry.json().output).toMatchObject({ dry_run: true });
    const failing = await tessera(['functions', 'invoke', 'fail']);
    expect(failing.code).toBe(7);
    expect(failing.stderr).toMatch(/422|NOPE/);
    expect((await tessera(['functions', 'invoke', 'hello', '--data', '{not json'])).code).toBe(2);
    expect((await tessera(['functions', 'invoke', 'nothing'])).code).toBe(5);
    expect((await tessera(['functions', 'delete', 'fail', '--yes'])).code).toBe(0);
    expect((await tessera(['functions', 'delete', 'fail', '--yes'])).code).toBe(5);
  });

  it('sets, lists and unsets secrets', async () => {
    expect((await tessera(['secrets', 'set', 'API_KEY=abc123'])).code).toBe(0);
    expect((await tessera(['secrets', 'set', 'OTHER', '--value-stdin'], { input: 'from stdin\n' })).code).toBe(0);
    expect((await tessera(['secrets', 'list', '--json'])).json().map((s: { name: string }) => s.name)).toEqual([
      'API_KEY',
      'OTHER',
    ]);
    expect((await tessera(['secrets', 'list'])).stdout).not.toContain('abc123');
    expect((await tessera(['secrets', 'unset', 'OTHER'])).code).toBe(0);
    expect((await tessera(['secrets', 'set', 'NOVALUE'])).code).toBe(2);
  });

  it('lists executions, shows one with its step log, and tails new ones', async () => {
    const list = (await tessera(['executions', 'list', '--function', 'hello', '--json'])).json();
    expect(list.length).toBeGreaterThan(0);
    const show = await tessera(['executions', 'show', list[0].id]);
    expect(show.stdout).toMatch(/#\d+ say \(Transform\) (started|succeeded)/);
    expect((await tessera(['executions', 'show', '00000000-0000-4000-8000-000000000000'])).code).toBe(5);
    // From a moment before the tail starts: the run invoked next is its to catch whenever its first poll comes.
    const since = new Date().toISOString();
    const tail = tessera([
      'executions',
      'tail',
      '--since',
      since,
      '--function',
      'hello',
      '--count',
      '1',
      '--interval',
      '200',
      '--timeout',
      '30',
      '--json',
    ]);
    await tessera(['functions', 'invoke', 'hello', '--data', '{"name": "tailed"}']);
    const tailed = await tail;
    expect(tailed.code).toBe(0);
    const run = JSON.parse(tailed.stdout);
    expect(run).toMatchObject({ function: 'hello', status: 'succeeded', output: { hi: 'tailed' } });
    expect(run.events.length).toBeGreaterThan(0);
  });

  it('runs SQL from a file and from stdin, and generates the tables’ TypeScript types', async () => {
    const file = path.join(dir, 'schema.sql');
    fs.writeFileSync(
      file,
      'create table notes (id serial primary key, body text not null, tags text[], meta jsonb, score float8, created timestamptz default now());\n',
    );
    expect((await tessera(['db', 'sql', file])).code).toBe(0);
    const rows = await tessera(['db', 'sql', '-', '--params', '["x"]', '--json'], {
      input: 'insert into notes (body) values ($1) returning id, body',
    });
    expect(rows.json().rows).toEqual([{ id: 1, body: 'x' }]);
    const human = await tessera(['db', 'sql', '-'], { input: 'select id, body from notes' });
    expect(human.stdout).toMatch(/ID\s+BODY\n1\s+x\n\(1 rows\)/);
    const refused = await tessera(['db', 'sql', '-'], { input: 'select * from nope' });
    expect(refused.code).toBe(5);
    expect((await tessera(['db', 'sql', path.join(dir, 'missing.sql')])).code).toBe(2);
    // A schema file of several statements runs as one transaction (issue 27): each statement's tag, then the rows.
    const script = path.join(dir, 'seed.sql');
    fs.writeFileSync(
      script,
      "create table tags (name text primary key);\ninsert into tags values ('a'), ('b');\nselect count(*)::int as n from tags;\n",
    );
    const ran = await tessera(['db', 'sql', script]);
    expect([ran.code, ran.stderr]).toEqual([0, '']);
    expect(ran.stdout).toMatch(/^CREATE\nINSERT 2\nSELECT 1\nN\s*\n2\n\(1 rows\)/);
    // A failing statement keeps nothing of the script, and says which one failed.
    fs.writeFileSync(script, "create table kept_not (id int);\ninsert into kept_not values ('x');\n");
    const failed = await tessera(['db', 'sql', script]);
    expect(failed.code).toBe(7);
    expect(failed.stderr).toMatch(/statement 2 \(line 2\)/);
    const none = await tessera(['db', 'sql', '-', '--json'], {
      input: "select count(*)::int as n from information_schema.tables where table_name = 'kept_not'",
    });
    expect(none.json().rows).toEqual([{ n: 0 }]);
    const types = await tessera(['gen', 'types']);
    expect(types.stdout).toContain('export type Database = {');
    expect(types.stdout).toMatch(
      /notes: \{\n {4}id: number;\n {4}body: string;\n {4}tags: string\[\] \| null;\n {4}meta: Json \| null;\n {4}score: number \| null;\n {4}created: string \| null;/,
    );
    expect(types.stdout).toMatch(/id\?: number;/);
    const out = path.join(dir, 'db.ts');
    expect((await tessera(['gen', 'types', '--output', out])).code).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe(types.stdout);
  });

  it('copies files up (with progress) and down, lists and removes them', async () => {
    const src = path.join(dir, 'photo.bin');
    fs.writeFileSync(src, Buffer.alloc(200_000, 7));
    const up = await tessera(['storage', 'cp', src, 'ts:pics/', '--json'], { env: { TESSERA_PROGRESS: '1' } });
    expect(up.code).toBe(0);
    expect(up.json()).toMatchObject({ folder: 'pics', name: 'photo.bin', size: 200_000, status: 'ready' });
    expect(up.stderr).toMatch(/uploading \[#+\] 100% 200\.0 kB\/200\.0 kB/);
    expect((await tessera(['storage', 'cp', src, 'ts:pics/photo.bin'])).code).toBe(6); // exists: --upsert replaces
    expect((await tessera(['storage', 'cp', src, 'ts:pics/photo.bin', '--upsert'])).code).toBe(0);
    const ls = await tessera(['storage', 'ls', 'ts:pics']);
    expect(ls.stdout).toMatch(/pics\/photo\.bin\s+200000/);
    const down = path.join(dir, 'back.bin');
    expect((await tessera(['storage', 'cp', 'ts:pics/photo.bin', down])).code).toBe(0);
    expect(fs.readFileSync(down).equals(fs.readFileSync(src))).toBe(true);
    expect((await tessera(['storage', 'cp', 'ts:pics/none.bin', down])).code).toBe(5);
    expect((await tessera(['storage', 'cp', src, down])).code).toBe(2);
    expect((await tessera(['storage', 'rm', 'ts:pics/photo.bin', '--yes'])).code).toBe(0);
    expect((await tessera(['storage', 'ls', '--json'])).json()).toEqual([]);
  });

  it('logs out: the session is revoked and the credentials are gone', async () => {
    const token = JSON.parse(fs.readFileSync(path.join(configDir, 'credentials.json'), 'utf8')).accessToken as string;
    expect((await tessera(['logout'])).code).toBe(0);
    expect(fs.existsSync(path.join(configDir, 'credentials.json'))).toBe(false);
    expect((await client(platform.url)('GET', '/auth/api/v1/tenant', { token })).status).toBe(401);
    expect((await tessera(['whoami'])).code).toBe(3);
  });

  it('recovers and manages the account: recovery-code login, new codes, password change, sessions, deletion', async () => {
    const login = await tessera([
      'login',
      '--email',
      email,
      '--password',
      password,
      '--recovery-code',
      recoveryCodes[0]!,
    ]);
    expect([login.code, login.stderr]).toEqual([0, '']);
    // A recovery code works once.
    const again = await tessera([
      'login',
      '--email',
      email,
      '--password',
      password,
      '--recovery-code',
      recoveryCodes[0]!,
    ]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/INVALID_MFA_CODE/);

    const sessions = (await tessera(['account', 'sessions', '--json'])).json() as { current: boolean }[];
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    const totp = await nextCode(mfaSecret, lastTotp);
    const codes = await tessera(['account', 'recovery-codes', '--totp', totp, '--json']);
    expect(codes.code).toBe(0);
    const fresh = codes.json().recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(
      (await tessera(['login', '--email', email, '--password', password, '--recovery-code', recoveryCodes[1]!])).code,
    ).toBe(3);

    const wrong = await tessera([
      'account',
      'password',
      'change',
      '--password',
      'not it at all',
      '--new-password',
      'x',
    ]);
    expect(wrong.code).toBe(7);
    expect(wrong.stderr).toMatch(/new_password|current_password/);
    const changed = await tessera([
      'account',
      'password',
      'change',
      '--password',
      password,
      '--new-password',
      'a new cli password',
    ]);
    expect([changed.code, changed.stderr]).toEqual([0, '']);
    expect((await tessera(['account', 'sessions', 'revoke-all', '--keep-current', '--json'])).json()).toEqual({
      revoked: expect.any(Number),
    });
    expect((await tessera(['account', 'password', 'forgot', email])).code).toBe(0);
    expect((await tessera(['account', 'delete', '--password', 'a new cli password'])).code).toBe(2); // needs --yes
    const deleted = await tessera(['account', 'delete', '--password', 'a new cli password', '--yes', '--json']);
    expect([deleted.code, deleted.stderr]).toEqual([0, '']);
    expect(deleted.json()).toMatchObject({ deleted: email, deleted_projects: expect.any(Array) });
    expect((await tessera(['whoami'])).code).toBe(3);
    expect(
      (await tessera(['login', '--email', email, '--password', 'a new cli password', '--recovery-code', fresh[0]!]))
        .code,
    ).toBe(3);
  }, 90_000);
});
