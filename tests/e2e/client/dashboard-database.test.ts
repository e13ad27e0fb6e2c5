// The database console's table editing in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a live Tessera (issue 27, 3): the column editor (add, rename, retype, drop a column; drop a table after
// typing its name) with the SQL each change runs shown first, exact row counts, hostile table and column names that
// must stay names (never SQL), CSV export and import (round trip, a bad line reported by its number), and the RLS
// policy editor (create, edit, drop; the warning on a table with RLS on and no policy). Each view is saved as a
// screenshot (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import {
  contains,
  count,
  gone,
  openConsole,
  pageChecks,
  shown,
  signUpWithProject,
} from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';
import { setPlanLimits } from '../../support/plans.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let base: string;
let browser: Browser;
let page: Page;
let projectId = '';
let apiKey = '';
let publishableKey = '';
const consoleErrors: string[] = [];
const tenant = { email: `db-${Date.now()}@example.com`, password: 'a long enough password 1', name: 'Db Board' };

/** rawSQL with the project's secret key (set-up and checks outside the browser). */
async function sql(text: string, params: unknown[] = []): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${platform.url}/v1/rawSQL`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: text, params }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The rows of a query (which must succeed). */
async function rows(text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const r = await sql(text, params);
  expect({ status: r.status, body: r.status === 200 ? 'ok' : r.body }).toEqual({ status: 200, body: 'ok' });
  return r.body.rows as Record<string, unknown>[];
}

/** The columns of a table, in order, as the database has them. */
async function columnsOf(table: string): Promise<{ name: string; type: string }[]> {
  return (await rows(
    `select column_name as name, data_type as type from information_schema.columns
      where table_schema = current_schema() and table_name = $1 order by ordinal_position`,
    [table],
  )) as { name: string; type: string }[];
}

async function tableExists(table: string): Promise<boolean> {
  return (
    (
      await rows(
        `select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_name = $1`,
        [table],
      )
    )[0]!.n === 1
  );
}

const { main, checkPage } = pageChecks(() => page);

/** Opens a page of the project's console. */
const open = async (address: string) => await page.goto(`${base}/dashboard/p/${projectId}${address}`);
const tablePage = (table: string) => open(`/database/tables/${encodeURIComponent(table)}`);

beforeAll(async () => {
  ({ platform, base, browser, page } = await openConsole({}, consoleErrors, { acceptDownloads: true }));

  ({ projectId, apiKey, publishableKey } = await signUpWithProject(page, base, platform.url, tenant, 'Shop'));
  await waitFor(async () => (await sql('select 1 as one')).status === 200, { message: 'the project database' });
  await rows(
    `create table products (id bigserial primary key, name text not null, price text);
     insert into products (name, price) select 'item ' || g, (g * 3)::text from generate_series(1, 30) g;
     create table victims (id int primary key);
     insert into victims values (1)`,
  );
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('the column editor', () => {
  it('adds a column, showing the SQL it runs first', async () => {
    await tablePage('products');
    const editor = main().getByRole('region', { name: 'Columns of products' });
    await contains(editor.getByRole('table', { name: 'Columns of products' }), 'price');
    await editor.getByRole('button', { name: 'Add column' }).first().click();
    const form = main().getByRole('form', { name: 'Add a column' });
    await form.getByLabel('New column name').fill('in stock');
    await form.getByLabel('New column type').selectOption('boolean');
    await form.getByLabel('New column default').fill('true');
    await form.getByLabel('Nullable').uncheck();
    await contains(
      form.getByLabel('SQL preview'),
      'alter table "products" add column "in stock" boolean not null default true;',
    );
    await checkPage('30-database-add-column');
    await form.getByRole('button', { name: 'Add column' }).click();
    await gone(form);
    await contains(editor.getByRole('table', { name: 'Columns of products' }), 'in stock');
    expect(await columnsOf('products')).toContainEqual({ name: 'in stock', type: 'boolean' });
  });

  it('renames a column to a reserved word and to a name with a space', async () => {
    const editor = main().getByRole('region', { name: 'Columns of products' });
    await editor.getByRole('button', { name: 'Rename column name' }).click();
    const form = main().getByRole('form', { name: 'Rename column name' });
    await form.getByLabel('New name').fill('select');
    await contains(form.getByLabel('SQL preview'), 'alter table "products" rename column "name" to "select";');
    await form.getByRole('button', { name: 'Rename column' }).click();
    await gone(form);
    await editor.getByRole('button', { name: 'Rename column price' }).click();
    await main().getByRole('form', { name: 'Rename column price' }).getByLabel('New name').fill('My Col');
    await main()
      .getByRole('form', { name: 'Rename column price' })
      .getByRole('button', { name: 'Rename column' })
      .click();
    await contains(editor.getByRole('table', { name: 'Columns of products' }), 'My Col');
    expect((await columnsOf('products')).map((c) => c.name)).toEqual(['id', 'select', 'My Col', 'in stock']);
    // The rows are still browsable under the new names.
    await contains(main().getByRole('table', { name: 'Rows of products' }), 'item 1');
  });

  it('changes a column type with a USING expression, and shows a failing change with nothing changed', async () => {
    const editor = main().getByRole('region', { name: 'Columns of products' });
    await editor.getByRole('button', { name: 'Change type of column My Col' }).click();
    const form = main().getByRole('form', { name: 'Change type of column My Col' });
    await form.getByLabel('New type').selectOption('integer');
    await form.getByLabel('USING expression (optional)').fill('"My Col"::integer * 100');
    await contains(
      form.getByLabel('SQL preview'),
      'alter table "products" alter column "My Col" type integer using ("My Col"::integer * 100);',
    );
    await checkPage('31-database-retype-column');
    await form.getByRole('button', { name: 'Change type' }).click();
    await gone(form);
    expect(await columnsOf('products')).toContainEqual({ name: 'My Col', type: 'integer' });
    expect((await rows(`select "My Col" as v from products where id = 2`))[0]!.v).toBe(600);
    // A change the database refuses: the error is shown and the column keeps its type.
    await editor.getByRole('button', { name: 'Change type of column select' }).click();
    const bad = main().getByRole('form', { name: 'Change type of column select' });
    await bad.getByLabel('New type').selectOption('integer');
    await bad.getByLabel('USING expression (optional)').fill('"select"::integer');
    await bad.getByRole('button', { name: 'Change type' }).click();
    await contains(main().getByRole('alert').filter({ hasText: 'nothing was changed' }), 'invalid input syntax');
    expect(await columnsOf('products')).toContainEqual({ name: 'select', type: 'text' });
    await bad.getByRole('button', { name: 'Cancel' }).click();
  });

  it('drops a column only after asking', async () => {
    const editor = main().getByRole('region', { name: 'Columns of products' });
    await editor.getByRole('button', { name: 'Delete column in stock' }).click();
    const dialog = page.getByRole('dialog');
    await contains(dialog.getByLabel('SQL of the drop'), 'alter table "products" drop column "in stock";');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await gone(dialog);
    expect((await columnsOf('products')).map((c) => c.name)).toContain('in stock');
    await editor.getByRole('button', { name: 'Delete column in stock' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Drop column' }).click();
    await gone(editor.getByRole('table', { name: 'Columns of products' }).getByText('in stock'));
    expect((await columnsOf('products')).map((c) => c.name)).toEqual(['id', 'select', 'My Col']);
  });

  it('counts the rows exactly, on the table page and in the list', async () => {
    await main()
      .getByRole('region', { name: 'Columns of products' })
      .getByRole('button', { name: 'Count rows' })
      .click();
    await contains(main().getByTestId('exact-count'), '30 rows (exact count)');
    // The list shows the planner's estimate (known once the table is analyzed), and the exact count on demand.
    await rows('analyze products');
    await open('/database/tables');
    await contains(main().getByRole('row').filter({ hasText: 'products' }), '≈ 30');
    await main().getByRole('button', { name: 'Count the rows of products' }).click();
    await contains(main().getByTestId('count-products'), '30');
    await checkPage('32-database-tables-counts');
  });

  it('drops a table only once its name is typed', async () => {
    await rows('create table scratch (id int)');
    await tablePage('scratch');
    await main().getByRole('button', { name: 'Delete table scratch' }).click();
    const dialog = page.getByRole('dialog');
    await contains(dialog.getByLabel('SQL of the drop'), 'drop table "scratch";');
    const go = dialog.getByRole('button', { name: 'Drop table' });
    expect(await go.isDisabled()).toBe(true);
    await dialog.getByLabel('Type scratch to confirm').fill('scratc');
    expect(await go.isDisabled()).toBe(true);
    await dialog.getByLabel('Type scratch to confirm').fill('scratch');
    await go.click();
    await page.waitForURL(/\/database\/tables$/);
    await contains(main().getByRole('table'), 'products');
    await count(main().getByRole('link', { name: 'scratch', exact: true }), 0);
    expect(await tableExists('scratch')).toBe(false);
  });
});

describe('hostile names stay names', () => {
  const table = 'evil"; drop table victims; --';
  const column = 'x" text); drop table victims; --';

  it('edits and drops a table whose name and columns are SQL', async () => {
    await rows(`create table "evil""; drop table victims; --" (id int primary key, "My Col" text)`);
    await tablePage(table);
    const editor = main().getByRole('region', { name: `Columns of ${table}` });
    await editor.getByRole('button', { name: 'Add column' }).first().click();
    const add = main().getByRole('form', { name: 'Add a column' });
    await add.getByLabel('New column name').fill(column);
    await contains(
      add.getByLabel('SQL preview'),
      `alter table "evil""; drop table victims; --" add column "x"" text); drop table victims; --" text;`,
    );
    await add.getByRole('button', { name: 'Add column' }).click();
    await gone(add);
    await editor.getByRole('button', { name: 'Rename column My Col' }).click();
    const rename = main().getByRole('form', { name: 'Rename column My Col' });
    await rename.getByLabel('New name').fill("'); delete from victims; --");
    await rename.getByRole('button', { name: 'Rename column' }).click();
    await gone(rename);
    expect((await columnsOf(table)).map((c) => c.name)).toEqual(['id', "'); delete from victims; --", column]);
    await checkPage('33-database-hostile-names');
    await main()
      .getByRole('button', { name: `Delete table ${table}` })
      .click();
    await page.getByRole('dialog').getByLabel(`Type ${table} to confirm`).fill(table);
    await page.getByRole('dialog').getByRole('button', { name: 'Drop table' }).click();
    await page.waitForURL(/\/database\/tables$/);
    expect(await tableExists(table)).toBe(false);
    // The neighbour is intact.
    expect(await rows('select id from victims')).toEqual([{ id: 1 }]);
  });
});

describe('a table whose name holds percent signs and a slash', () => {
  it('opens from the list as itself (its address is decoded once)', async () => {
    const name = '50%25 off/%';
    await rows(`create table "50%25 off/%" (id int primary key)`);
    await open('/database/tables');
    await main().getByRole('link', { name, exact: true }).click();
    await shown(main().getByRole('heading', { name: `Table ${name}` }));
    await contains(main().getByRole('table', { name: `Columns of ${name}` }), 'id');
    await rows(`drop table "50%25 off/%"`);
  });
});

describe('CSV export and import', () => {
  const tricky = 'a, "quoted"\nsecond line';
  let exported = '';

  it('exports every row of a table as RFC 4180 CSV, over several pages', async () => {
    await rows(
      `create table src_rows (id int primary key, label text, note text, data jsonb, tags text[]);
       insert into src_rows select g, 'row ' || g, case when g % 7 = 0 then null else 'n' || g end,
         jsonb_build_object('g', g), array['t' || g, 'x'] from generate_series(1, 2500) g;
       update src_rows set label = $$${tricky}$$ where id = 5;
       update src_rows set note = '' where id = 6;
       create table dst_rows (id int primary key, label text, note text, data jsonb, tags text[])`,
    );
    await tablePage('src_rows');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      main().getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('src_rows.csv');
    exported = fs.readFileSync((await download.path())!, 'utf8');
    const lines = exported.split('\r\n');
    expect(lines[0]).toBe('id,label,note,data,tags');
    expect(lines[1]).toBe('1,row 1,n1,"{""g"":1}","[""t1"",""x""]"');
    // Quotes doubled, the comma and the line break inside quotes; NULL empty, the empty text quoted.
    expect(exported).toContain('\r\n5,"a, ""quoted""\nsecond line",n5,');
    expect(exported).toContain('\r\n6,row 6,"",');
    expect(exported).toContain('\r\n7,row 7,,');
    expect(lines.at(-1)).toBe('');
    expect(lines.length).toBe(1 + 2500 + 1); // the header, the rows (row 5's LF is inside quotes), after the last CRLF
    await contains(main().getByRole('status').filter({ hasText: 'rows exported' }), '2500 rows exported');
    await checkPage('34-database-csv');
  });

  it('imports the export into another table with a progress bar: the same rows', async () => {
    await tablePage('dst_rows');
    await main()
      .locator('#csv-file')
      .setInputFiles({ name: 'src_rows.csv', mimeType: 'text/csv', buffer: Buffer.from(exported) });
    const form = main().getByRole('form', { name: 'Import CSV' });
    await shown(form);
    // The header's fields are matched to the columns of the same name.
    expect(await form.getByLabel('Column for field 4 (data)').inputValue()).toBe('data');
    await checkPage('35-database-csv-mapping');
    await form.getByRole('button', { name: 'Import src_rows.csv' }).click();
    await contains(main().locator('label[for="csv-import-progress"]'), 'Import finished: 2500 rows inserted');
    expect(
      await main()
        .locator('#csv-import-progress')
        .evaluate((p) => (p as HTMLProgressElement).position),
    ).toBe(1);
    const sameRows = `select (select count(*)::int from src_rows) as src, (select count(*)::int from dst_rows) as dst,
      (select count(*)::int from (select id, label, coalesce(note, '') as note, data, tags from src_rows
                       except select id, label, coalesce(note, '') as note, data, tags from dst_rows) d) as differ`;
    // The empty text of row 6 comes back NULL (an empty field is NULL on import): compared through coalesce.
    expect(await rows(sameRows)).toEqual([{ src: 2500, dst: 2500, differ: 0 }]);
    expect(await rows(`select label, tags from dst_rows where id = 5`)).toEqual([{ label: tricky, tags: ['t5', 'x'] }]);
    expect(await rows(`select note from dst_rows where id in (6, 7) order by id`)).toEqual([
      { note: null },
      { note: null },
    ]);
  });

  const badFile = [
    'id,label,note,data,tags', //                                   line 1
    '3001,fine,,"{""a"":1}","[""t""]"', //                          line 2
    'x3002,not an integer,,,', //                                   line 3
    '3003,"two', //                                                 line 4
    'lines",,,', //                                                 line 5
    '3004,too,many,fields,,', //                                    line 6
    '3005,bad json,,{nope,', //                                     line 7
    '1,duplicate key,,,', //                                        line 8
    '3006,last,,,', //                                              line 9
    '',
  ].join('\n');

  it('reports each refused row by its line and inserts the others', async () => {
    await main()
      .locator('#csv-file')
      .setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(badFile) });
    const form = main().getByRole('form', { name: 'Import CSV' });
    await form.getByRole('button', { name: 'Import bad.csv' }).click();
    const refused = main().getByRole('alert', { name: 'Refused lines' });
    await contains(refused, '4 lines were refused');
    const items = await refused.locator('li').allInnerTexts();
    expect(items.map((t) => t.replace(/:.*/s, ''))).toEqual(['Line 3', 'Line 6', 'Line 7', 'Line 8']);
    expect(items[0]).toMatch(/invalid input syntax for type integer/);
    expect(items[1]).toMatch(/expected 5 fields, found 6/);
    expect(items[2]).toMatch(/not JSON/);
    expect(items[3]).toMatch(/duplicate key/);
    await contains(main().locator('label[for="csv-import-progress"]'), 'Import finished: 3 rows inserted, 4 refused');
    await checkPage('36-database-csv-errors');
    expect(await rows(`select id, label from dst_rows where id > 3000 order by id`)).toEqual([
      { id: 3001, label: 'fine' },
      { id: 3003, label: 'two\nlines' },
      { id: 3006, label: 'last' },
    ]);
  });

  it('all or nothing: one refused row and no row is inserted, each refused line listed', async () => {
    const file = badFile.replace(/^3001/m, '4001').replace(/^3003/m, '4003').replace(/^3006/m, '4006');
    await main()
      .locator('#csv-file')
      .setInputFiles({ name: 'bad2.csv', mimeType: 'text/csv', buffer: Buffer.from(file) });
    const form = main().getByRole('form', { name: 'Import CSV' });
    await form.getByLabel(/^All or nothing/).check();
    await form.getByRole('button', { name: 'Import bad2.csv' }).click();
    const refused = main().getByRole('alert', { name: 'Refused lines' });
    await contains(main().locator('label[for="csv-import-progress"]'), 'Import finished: 0 rows inserted, 4 refused');
    await contains(refused, '4 lines were refused, so nothing was inserted');
    expect((await refused.locator('li').allInnerTexts()).map((t) => t.replace(/:.*/s, ''))).toEqual([
      'Line 3',
      'Line 6',
      'Line 7',
      'Line 8',
    ]);
    expect(await rows(`select count(*)::int as n from dst_rows where id > 4000`)).toEqual([{ n: 0 }]);
    // Without the parse errors, the database's refusal (the duplicate key) is found by dry runs: still nothing in.
    const onlyDuplicate = ['id,label', '4101,ok', '1,duplicate', '4102,ok', ''].join('\n');
    await main()
      .locator('#csv-file')
      .setInputFiles({ name: 'dup.csv', mimeType: 'text/csv', buffer: Buffer.from(onlyDuplicate) });
    await main()
      .getByRole('form', { name: 'Import CSV' })
      .getByLabel(/^All or nothing/)
      .check();
    await main().getByRole('form', { name: 'Import CSV' }).getByRole('button', { name: 'Import dup.csv' }).click();
    await contains(main().getByRole('alert', { name: 'Refused lines' }), /Line 3: .*duplicate key/);
    expect(await rows(`select count(*)::int as n from dst_rows where id > 4000`)).toEqual([{ n: 0 }]);
  });
});

/** What the publishable key reads of a table through the data API. */
async function anonFind(table: string): Promise<unknown[]> {
  const res = await fetch(`${platform.url}/v1/find`, {
    method: 'POST',
    headers: { 'x-api-key': publishableKey, 'content-type': 'application/json' },
    body: JSON.stringify({ table }),
  });
  const body = (await res.json()) as { rows: unknown[] };
  expect({ status: res.status, body: res.status === 200 ? 'ok' : body }).toEqual({ status: 200, body: 'ok' });
  return body.rows;
}

/** The policies of a table as the schema endpoint lists them. */
async function policiesOf(table: string): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${platform.url}/v1/schema`, { headers: { 'x-api-key': apiKey } });
  const body = (await res.json()) as { tables: { name: string; policies: Record<string, unknown>[] }[] };
  return body.tables.find((t) => t.name === table)!.policies;
}

describe('the RLS policy editor', () => {
  const card = (table: string) => main().getByRole('region', { name: `Policies of ${table}` });

  it('lists the tables and warns on one with RLS on and no policy', async () => {
    await rows(
      `create table notes (id serial primary key, owner text, body text);
       alter table notes enable row level security;
       insert into notes (owner, body) values ('ann', 'first'), ('ben', 'second');
       create table open_table (id int primary key)`,
    );
    expect(await anonFind('notes')).toEqual([]);
    await open('/database/tables');
    await contains(main().getByRole('row').filter({ hasText: 'notes' }), 'on, no policy');
    await open('/database/policies');
    await shown(main().getByTestId('no-policy-notes'));
    await contains(main().getByTestId('no-policy-notes'), 'the publishable key and end-users get no rows');
    await contains(card('open_table'), 'RLS off');
    await checkPage('37-database-policies');
  });

  it('creates a policy with the form, showing its CREATE POLICY first: the warning goes, the key reads rows', async () => {
    await card('notes').getByRole('button', { name: 'New policy on notes' }).click();
    const form = main().getByRole('form', { name: 'New policy on notes' });
    await form.getByLabel('Policy name').fill('public read');
    await form.getByLabel('Command').selectOption('SELECT');
    await form.getByLabel(/^USING/).fill('true');
    await contains(
      form.getByLabel('SQL preview'),
      'create policy "public read" on "notes"\n  as permissive for select to public\n  using (true);',
    );
    // SELECT takes no WITH CHECK.
    expect(await form.getByLabel(/^WITH CHECK/).count()).toBe(0);
    await checkPage('38-database-policy-form');
    await form.getByRole('button', { name: 'Create policy' }).click();
    await gone(form);
    await contains(card('notes').getByRole('table', { name: 'Policies of notes' }), 'public read');
    await gone(main().getByTestId('no-policy-notes'));
    expect(await policiesOf('notes')).toEqual([
      { name: 'public read', command: 'SELECT', roles: ['public'], permissive: true, using: 'true', withCheck: null },
    ]);
    expect(await anonFind('notes')).toHaveLength(2);
  });

  it('edits a policy with ALTER POLICY (expression and name), and with DROP and CREATE when its command changes', async () => {
    await card('notes').getByRole('button', { name: 'Edit policy public read' }).click();
    const form = main().getByRole('form', { name: 'Edit policy public read on notes' });
    await form.getByLabel('Policy name').fill('ann reads');
    await form.getByLabel(/^USING/).fill("owner = 'ann'");
    await contains(
      form.getByLabel('SQL preview'),
      `alter policy "public read" on "notes"\n  using (owner = 'ann');\nalter policy "public read" on "notes" rename to "ann reads";`,
    );
    await form.getByRole('button', { name: 'Save policy' }).click();
    await gone(form);
    await contains(card('notes').getByRole('table', { name: 'Policies of notes' }), 'ann reads');
    expect(await anonFind('notes')).toEqual([{ id: 1, owner: 'ann', body: 'first' }]);
    await card('notes').getByRole('button', { name: 'Edit policy ann reads' }).click();
    const again = main().getByRole('form', { name: 'Edit policy ann reads on notes' });
    await again.getByLabel('Command').selectOption('ALL');
    await again.getByLabel('Kind').selectOption('restrictive');
    await contains(
      again.getByLabel('SQL preview'),
      'drop policy "ann reads" on "notes";\ncreate policy "ann reads" on "notes"\n  as restrictive for all to public',
    );
    await again.getByRole('button', { name: 'Cancel' }).click();
    await gone(again);
  });

  it('drops a policy after asking: the no-policy warning comes back', async () => {
    await card('notes').getByRole('button', { name: 'Delete policy ann reads' }).click();
    const dialog = page.getByRole('dialog');
    await contains(dialog.getByLabel('SQL of the drop'), 'drop policy "ann reads" on "notes";');
    await dialog.getByRole('button', { name: 'Drop policy' }).click();
    await shown(main().getByTestId('no-policy-notes'));
    expect(await policiesOf('notes')).toEqual([]);
    expect(await anonFind('notes')).toEqual([]);
  });

  it('turns RLS on for a table that has it off, which then shows the warning', async () => {
    await card('open_table').getByRole('button', { name: 'Turn on RLS for open_table' }).click();
    await shown(main().getByTestId('no-policy-open_table'));
    await contains(card('open_table'), 'RLS on');
  });

  it('keeps hostile policy and table names as names', async () => {
    await rows(
      `create table "p""; drop table victims; --" (id int); alter table "p""; drop table victims; --" enable row level security`,
    );
    await open('/database/policies');
    const t = 'p"; drop table victims; --';
    await card(t)
      .getByRole('button', { name: `New policy on ${t}` })
      .click();
    const form = main().getByRole('form', { name: `New policy on ${t}` });
    await form.getByLabel('Policy name').fill('x" on victims; drop table victims; --');
    await form.getByLabel(/^USING/).fill('true');
    await form.getByRole('button', { name: 'Create policy' }).click();
    await gone(form);
    expect((await policiesOf(t)).map((p) => p.name)).toEqual(['x" on victims; drop table victims; --']);
    expect(await rows('select id from victims')).toEqual([{ id: 1 }]);
  });
});

describe('the database usage line (issue 28)', () => {
  it("shows the database's rows and size against the plan, and says when the plan's limit is reached", async () => {
    await open('/database/tables');
    const line = main().getByTestId('database-usage');
    await contains(line, 'of 100,000 rows');
    await contains(line, 'of 500.0 MB');
    await checkPage('39-database-usage');
    // The operator lowers the limit below what the project holds: the line says writes are refused.
    await setPlanLimits(platform, 'free', { max_database_rows: 1 });
    try {
      await waitFor(
        async () => {
          await open('/database/tables');
          return (await line.textContent({ timeout: 5_000 }).catch(() => ''))?.includes('limit is reached');
        },
        { message: 'the usage line to say the limit is reached' },
      );
      await contains(line, 'of 1 rows');
      await checkPage('39-database-usage-over');
    } finally {
      await setPlanLimits(platform, 'free', { max_database_rows: 100_000 });
    }
  });
});

describe('the console', () => {
  it('logged no script error', () => {
    expect(
      consoleErrors.filter(
        (e) => !/Failed to load resource: the server responded with a status of (400|401|404|409)/.test(e),
      ),
    ).toEqual([]);
  });
});
