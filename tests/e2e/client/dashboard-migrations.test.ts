// The console's migrations page (Database → Migrations) in a real browser (Debian's chromium, headless, driven by
// playwright-core) against a live Tessera: the migrations `tessera db push` applied are listed with their checksums,
// a migration written in the form is applied (and appears, and its table exists), a failing one shows its error and
// leaves nothing, and the schema is shown as SQL. Screenshots in tests/artifacts/dashboard; axe-core finds no serious or
// critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import crypto from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { contains, openConsole, pageChecks, shown, signUpWithProject } from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';
import type { Res } from '../../support/http.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let base: string;
let browser: Browser;
let page: Page;
let projectId = '';
let apiKey = '';
const consoleErrors: string[] = [];
const tenant = { email: `mig-${Date.now()}@example.com`, password: 'a long enough password 1', name: 'Mig Board' };
const FIRST = 'create table posts (id serial primary key, title text not null);\n';

async function api(method: string, url: string, body?: unknown): Promise<Pick<Res, 'status' | 'body'>> {
  const res = await fetch(`${platform.url}${url}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // text/plain
  }
  return { status: res.status, body: parsed };
}

const { main, checkPage } = pageChecks(() => page);
const tables = async () =>
  (
    (
      await api('POST', '/v1/rawSQL', {
        sql: "select table_name from information_schema.tables where table_schema = current_schema() and table_name <> 'tessera_migrations' order by 1",
      })
    ).body as { rows: { table_name: string }[] }
  ).rows.map((r) => r.table_name);

beforeAll(async () => {
  ({ platform, base, browser, page } = await openConsole({}, consoleErrors));

  ({ projectId, apiKey } = await signUpWithProject(page, base, platform.url, tenant, 'Blog'));
  await waitFor(async () => (await api('POST', '/v1/rawSQL', { sql: 'select 1 as one' })).status === 200, {
    message: 'the project database',
  });
  // What `tessera db push` would have applied.
  const pushed = await api('POST', '/v1/migrations', { version: '20260101000000', name: 'create_posts', sql: FIRST });
  expect(pushed.status).toBe(200);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('the migrations page', () => {
  it('lists applied migrations with their checksums', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/database/migrations`);
    await shown(main().getByRole('heading', { name: 'Applied migrations' }));
    const table = main().getByRole('table', { name: 'Applied migrations' });
    await contains(table, 'create_posts');
    await contains(table, '20260101000000');
    await contains(table, crypto.createHash('sha256').update(FIRST).digest('hex').slice(0, 12));
    await checkPage('database-migrations');
  });

  it('applies a migration written in the form', async () => {
    await main().getByLabel('Name', { exact: true }).fill('Add comments');
    await main()
      .getByLabel('SQL', { exact: true })
      .fill('create table comments (id serial primary key, post_id int references posts (id), body text);');
    await main().getByRole('button', { name: 'Apply migration' }).click();
    const table = main().getByRole('table', { name: 'Applied migrations' });
    await contains(table, 'add_comments');
    expect(await tables()).toEqual(['comments', 'posts']);
    const list = (await api('GET', '/v1/migrations')).body as { migrations: { name: string }[] };
    expect(list.migrations.map((m) => m.name)).toEqual(['create_posts', 'add_comments']);
  });

  it('shows a failing migration’s error and keeps nothing of it', async () => {
    await main().getByLabel('Name', { exact: true }).fill('broken');
    await main()
      .getByLabel('SQL', { exact: true })
      .fill('create table half_made (id int);\ninsert into nowhere values (1);');
    await main().getByRole('button', { name: 'Apply migration' }).click();
    const alert = main().getByRole('alert');
    await contains(alert, 'nothing of it was kept');
    await contains(alert, 'statement 2 (line 2)');
    expect(await tables()).toEqual(['comments', 'posts']);
    await checkPage('database-migrations-failed');
  });

  it('shows the schema as SQL', async () => {
    await main().getByRole('button', { name: 'Show the schema as SQL' }).click();
    const sql = main().getByLabel('Schema SQL');
    await contains(sql, 'create table "comments"');
    await contains(sql, 'FOREIGN KEY (post_id) REFERENCES posts(id)');
    expect(await sql.innerText()).toBe((await api('GET', '/v1/schema?format=sql')).body as string);
    await checkPage('database-migrations-schema');
    expect(consoleErrors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
  });
});
