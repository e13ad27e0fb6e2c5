// The console's SQL editor in a real browser (issue 27, 1): PostgreSQL syntax highlighting (CodeMirror), a script of
// several statements run as one transaction with each statement's command tag, a failing script kept nowhere and
// named by statement, the history of what ran and saved snippets (kept in this browser per project: another project's
// editor shows neither), and axe with no serious violation.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { axe, contains, count, openSignedIn, pageChecks, shown, startConsole } from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { createClient } from '../../../packages/client/src/index.ts';

let platform: TestPlatform;
let browser: Browser;
let page: Page;
let base: string;
const ids: string[] = [];
const email = `sql-${Date.now()}@example.com`;
const password = 'a long enough password 1';
// The page's console errors (openSignedIn collects them; a failing script's 400 shows there, so none is asserted).
const consoleErrors: string[] = [];

const { main } = pageChecks(() => page);

/** Replaces the editor's text (CodeMirror: select all, then type). */
async function write(sql: string): Promise<void> {
  const editor = page.getByRole('textbox', { name: 'SQL' });
  await editor.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(sql);
}

beforeAll(async () => {
  ({ platform, base, browser } = await startConsole());
  const c = createClient({ url: platform.url });
  await c.tenant.signup({ email, password });
  await c.tenant.login({ email, password });
  ids.push((await c.tenant.projects.create('First')).id, (await c.tenant.projects.create('Second')).id);
  ({ page } = await openSignedIn(browser, base, { email, password }, consoleErrors));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('the SQL editor', () => {
  it('highlights SQL and runs a script as one transaction, listing each statement', async () => {
    await page.goto(`${base}/dashboard/p/${ids[0]}/database/sql`);
    await shown(page.getByRole('textbox', { name: 'SQL' }));
    await write(
      "create table fruit (id int primary key, name text);\ninsert into fruit values (1, 'apple'), (2, 'pear');\nselect name from fruit order by id;",
    );
    // Highlighted: keywords are tokens of their own inside the editor's lines.
    await contains(page.locator('.cm-content'), 'create table fruit');
    expect(await page.locator('.cm-line span').count()).toBeGreaterThan(3);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const statements = page.getByRole('list', { name: 'Statements run' });
    await count(statements.getByRole('listitem'), 3);
    expect((await statements.innerText()).replace(/\s+/g, ' ')).toMatch(
      /CREATE \(line 1\) INSERT 2 \(line 2\) SELECT 2 \(line 3\)/,
    );
    await contains(page.getByRole('table', { name: 'Result rows' }), 'pear');
    expect({ violations: await axe(page) }).toEqual({ violations: [] });
  });

  it('keeps nothing of a failing script and names the statement', async () => {
    await write("create table never_kept (id int);\ninsert into never_kept values ('x');");
    await page.keyboard.press('ControlOrMeta+Enter');
    await contains(main().getByRole('alert'), 'statement 2 (line 2)');
    await write("select count(*)::int as n from information_schema.tables where table_name = 'never_kept'");
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await contains(page.getByRole('table', { name: 'Result rows' }), '0');
  });

  it('lists what ran in the history and opens it again', async () => {
    const history = page.getByRole('list', { name: 'History' });
    await count(history.getByRole('listitem'), 3);
    await contains(history, 'create table fruit');
    await history.getByRole('button', { name: /Open from history: create table fruit/ }).click();
    await contains(page.locator('.cm-content'), "insert into fruit values (1, 'apple')");
  });

  it('saves snippets per project, kept across a reload and not shown in another project', async () => {
    await write('select name from fruit where id = 1');
    await page.getByLabel('Snippet name').fill('first fruit');
    await page.getByRole('button', { name: 'Save the SQL above' }).click();
    await page.reload();
    await page.getByRole('button', { name: 'Open snippet first fruit' }).click();
    await contains(page.locator('.cm-content'), 'select name from fruit where id = 1');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await contains(page.getByRole('table', { name: 'Result rows' }), 'apple');
    await page.goto(`${base}/dashboard/p/${ids[1]}/database/sql`);
    await shown(page.getByRole('textbox', { name: 'SQL' }));
    await contains(main(), 'No snippets yet');
    expect(await page.getByRole('list', { name: 'History' }).count()).toBe(0);
    expect({ violations: await axe(page) }).toEqual({ violations: [] });
  });
});
