// The dashboard's own logic, without a browser: the function editor's checks (JSON syntax and schema, each issue on
// its line), the create-table statements, typed cells, the same page in another project, and the front door's
// dashboard routes (the page, its assets, 404 for a missing asset, 503 when not built, no way out of the folder).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { checkDefinitionText, NEW_FUNCTION } from '../../dashboard/src/lib/function-schema.ts';
import { createTableSql, parseCell } from '../../dashboard/src/lib/tables.ts';
import { projectOf, samePageIn } from '../../dashboard/src/lib/routes.ts';
import { registerDashboard } from '../../rest-compat/dashboard.ts';

describe('the function editor checks', () => {
  it('accepts the starting definition', () => {
    expect(checkDefinitionText(NEW_FUNCTION).issues).toEqual([]);
  });

  it.each([
    ['a JSON syntax error', '{\n  "name": "x",\n  "steps": [\n}', 4, /JSON/],
    ['an unknown kind, on its line', NEW_FUNCTION.replace('"Transform"', '"Transformer"'), 7, /steps\.0\.kind/],
    ['a field of another kind', NEW_FUNCTION.replace('"expression"', '"query"'), 8, /steps\.0/],
    ['a bad function name', NEW_FUNCTION.replace('"hello"', '"9 lives"'), 2, /name/],
    ['no steps', '{\n  "name": "x",\n  "steps": []\n}', 3, /steps/],
    ['a field the definition does not have', NEW_FUNCTION.replace('"description"', '"descr"'), 3, /descr|definition/],
  ])('points at %s', (_what, text, line, message) => {
    const { issues } = checkDefinitionText(text);
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.map((i) => i.line)).toContain(line);
    expect(issues.map((i) => i.message).join('\n')).toMatch(message);
  });
});

describe('the create-table form', () => {
  it('quotes every name, puts the primary key last and turns RLS on as a second statement', () => {
    expect(
      createTableSql(
        'my "table"',
        [
          { name: 'id', type: 'bigserial', nullable: false, default: '', pk: true, unique: false },
          { name: 'title', type: 'text', nullable: false, default: "'untitled'", pk: false, unique: true },
          {
            name: 'evil"; drop table x; --',
            type: 'text; drop table y',
            nullable: true,
            default: '',
            pk: false,
            unique: false,
          },
          { name: '  ', type: 'text', nullable: true, default: '', pk: false, unique: false },
        ],
        true,
      ),
    ).toEqual([
      'create table "my ""table""" (\n  "id" bigserial,\n  "title" text not null unique default \'untitled\',\n  "evil""; drop table x; --" text,\n  primary key ("id")\n)',
      'alter table "my ""table""" enable row level security',
    ]);
  });

  it('types what is typed in a cell by the column type', () => {
    expect(parseCell('NULL', 'text')).toBeNull();
    expect(parseCell('42', 'integer')).toBe(42);
    expect(parseCell('9007199254740993', 'bigint')).toBe('9007199254740993');
    expect(parseCell('TRUE', 'boolean')).toBe(true);
    expect(parseCell('{"a":1}', 'jsonb')).toEqual({ a: 1 });
    expect(parseCell('["x"]', 'text[]')).toEqual(['x']);
    expect(parseCell('12', 'text')).toBe('12');
    expect(() => parseCell('twelve', 'integer')).toThrow('is not a number');
    expect(() => parseCell('yes', 'boolean')).toThrow('true or false');
  });
});

describe('switching project', () => {
  it('keeps the area and its tab, and leaves an item page for its list', () => {
    expect(projectOf('/p/abc/storage/policies')).toEqual({ id: 'abc', rest: '/storage/policies' });
    expect(projectOf('/account')).toBeUndefined();
    expect(samePageIn('/storage/policies', 'xyz')).toBe('/p/xyz/storage/policies');
    expect(samePageIn('/functions/f/some-id', 'xyz')).toBe('/p/xyz/functions');
    expect(samePageIn('/functions/executions/some-id', 'xyz')).toBe('/p/xyz/functions/executions');
    expect(samePageIn('/database/tables/orders', 'xyz')).toBe('/p/xyz/database/tables');
    expect(samePageIn('/auth/users/u1', 'xyz')).toBe('/p/xyz/auth');
    expect(samePageIn('', 'x y')).toBe('/p/x%20y');
  });
});

describe('the front door serving the dashboard', () => {
  let dist: string;
  let app: FastifyInstance;
  let empty: FastifyInstance;

  beforeAll(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(
      path.join(dist, 'index.html'),
      '<!doctype html><title>app</title><script type="module" src="/dashboard/assets/app-1.js"></script>',
    );
    fs.writeFileSync(path.join(dist, 'assets/app-1.js'), 'console.log(1)');
    fs.writeFileSync(path.join(dist, 'assets/app-1.js.gz'), Buffer.from('1f8b', 'hex'));
    fs.writeFileSync(path.join(dist, 'secret.txt'), 'not an asset');
    app = Fastify();
    await registerDashboard(app, { dist });
    empty = Fastify();
    await registerDashboard(empty, { dist: path.join(dist, 'missing') });
  });

  afterAll(async () => {
    await app.close();
    await empty.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('links / to /dashboard', async () => {
    const res = await app.inject('/');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('href="/dashboard"');
  });

  it('answers the page at every address under /dashboard, never cached, framed or given inline scripts', async () => {
    for (const url of ['/dashboard', '/dashboard/', '/dashboard/p/123/database/sql', '/dashboard/sign-in?x=1']) {
      const res = await app.inject(url);
      expect({ url, status: res.statusCode }).toEqual({ url, status: 200 });
      expect(res.body).toContain('/dashboard/assets/app-1.js');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self';.*frame-ancestors 'none'/);
      expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*unsafe/);
    }
  });

  it('serves assets for good, compressed for browsers that accept it', async () => {
    const plain = await app.inject('/dashboard/assets/app-1.js');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toContain('immutable');
    const gz = await app.inject({ url: '/dashboard/assets/app-1.js', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
  });

  it.each([
    ['a missing asset', '/dashboard/assets/nope.js'],
    ['a file beside the assets', '/dashboard/assets/../secret.txt'],
    ['an encoded way out', '/dashboard/assets/%2e%2e/secret.txt'],
    ['a doubly encoded way out', '/dashboard/assets/%252e%252e/secret.txt'],
    ['the package file', '/dashboard/assets/../../../package.json'],
  ])('never serves a file outside the assets for %s', async (_what, url) => {
    const res = await app.inject(url);
    expect(res.body).not.toContain('not an asset');
    expect(res.body).not.toContain('"name": "tessera"');
    // Either a refusal, or the path resolved inside /dashboard and answered the app's page.
    if (res.statusCode === 200) expect(res.body).toContain('/dashboard/assets/app-1.js');
    else expect([400, 403, 404]).toContain(res.statusCode);
  });

  it('says what to run when the dashboard is not built', async () => {
    const res = await empty.inject('/dashboard/p/1');
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run dashboard:build');
  });
});
