// Issue 29 in a real browser (Debian's chromium through playwright-core): the operator's Servers page with a second
// real PostgreSQL server (tests/support/pg-servers.ts): the fleet with its health, registering a server (its URL's
// password never on the page), a refused URL, state and weight changed in the row, a project's server in the projects
// list, and removing a server that holds a project (SERVER_IN_USE shown). Each page is saved as a screenshot
// (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { openConsole, pageChecks, shown } from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { startPgServer, type TestPgServer } from '../../support/pg-servers.ts';
import { waitFor } from '../../support/wait-for.ts';

jest.setTimeout(60_000);

const OPERATOR_KEY = `top_${randomBytes(32).toString('base64url')}`;

let platform: TestPlatform;
let pg2: TestPgServer;
let base: string;
let browser: Browser;
let page: Page;
let call: ReturnType<typeof client>;
let token = '';
// Refused calls (the unreachable server, SERVER_IN_USE) show in the console as failed loads.
const consoleErrors: string[] = [];
const tenant = { email: `servers-${Date.now()}@example.com`, password: 'a long enough password 1' };

const { main, checkPage } = pageChecks(() => page);
const tab = (name: string) => page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name });
const toast = (text: string | RegExp) => shown(page.locator('.toast').filter({ hasText: text }));
const serverRow = (id: string) =>
  main()
    .getByRole('table', { name: 'Project servers' })
    .getByRole('row')
    .filter({ has: page.getByText(id, { exact: true }) });
const op = (method: string, p: string, body?: unknown) =>
  call(method, `/admin/api/v1${p}`, { token: OPERATOR_KEY, body });

beforeAll(async () => {
  [{ platform, base, browser, page }, pg2] = await Promise.all([
    openConsole({ TESSERA_OPERATOR_KEY: OPERATOR_KEY, TESSERA_DEFAULT_PLAN: 'self-hosted' }, consoleErrors, {
      ignoreConsole: /the server responded with a status of 40[09]/,
    }),
    startPgServer(),
  ]);
  call = client(platform.url);
  await call('POST', '/auth/api/v1/tenants/signup', { body: tenant });
  token = (await call('POST', '/auth/api/v1/tenant/login', { body: tenant })).body.access_token;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await pg2?.stop();
});

describe("the operator's project servers", () => {
  it('lists the configured server, healthy, once signed in', async () => {
    await page.goto(`${base}/dashboard/operator`);
    await page.getByLabel('Operator key').fill(OPERATOR_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await tab('Servers').click();
    const row = serverRow('default');
    await shown(row);
    await shown(row.getByText('configured'));
    await shown(row.getByText('up', { exact: true }));
    await shown(row.getByText(/PostgreSQL \d+/));
    await checkPage('operator-servers-01-default');
  });

  it('refuses a server it cannot reach, naming the URL, with the error code', async () => {
    await page.getByLabel('Server id').fill('nowhere');
    await page.getByLabel('Connection URL').fill('postgres://tessera:pw-never-shown@127.0.0.1:1/postgres');
    await page.getByRole('button', { name: 'Register server' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The server was refused' });
    await shown(alert);
    await shown(alert.getByText(/^BAD_REQUEST/));
    await shown(alert.getByText(/url/).first());
    expect(await main().innerText()).not.toContain('pw-never-shown');
    await checkPage('operator-servers-02-refused');
  });

  it('registers a second server: listed up with its version, its password nowhere on the page', async () => {
    const secret = decodeURIComponent(new URL(pg2.url).password);
    await page.getByLabel('Server id').fill('pg2');
    await page.getByLabel('Connection URL').fill(pg2.url);
    await page.getByLabel('Weight', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Register server' }).click();
    await toast('Registered project server pg2');
    const row = serverRow('pg2');
    await shown(row.getByText(/PostgreSQL 15\./));
    await shown(row.getByText(`postgres://postgres@127.0.0.1:${pg2.port}/postgres`));
    expect(await page.locator('body').innerText()).not.toContain(secret);
    expect(await page.content()).not.toContain(secret);
    await checkPage('operator-servers-03-registered');
  });

  it("changes a server's state and weight in its row", async () => {
    const row = serverRow('pg2');
    await row.getByLabel('State of pg2').selectOption('read-only');
    await toast('Server pg2: read-only, weight 2');
    await shown(row.getByText('read-only', { exact: true }).first());
    await row.getByLabel('Weight of pg2', { exact: true }).fill('5');
    await row.getByRole('button', { name: 'Save weight of pg2' }).click();
    await toast('Server pg2: read-only, weight 5');
    const shownServer = (await op('GET', '/servers/pg2')).body;
    expect(shownServer).toMatchObject({ state: 'read-only', weight: 5 });
  });

  it("places a new project on the active server and shows each project's server in the projects list", async () => {
    // default read-only and pg2 active: the next project can only go to pg2.
    await serverRow('default').getByLabel('State of default').selectOption('read-only');
    await toast('Server default: read-only, weight 1');
    await serverRow('pg2').getByLabel('State of pg2').selectOption('active');
    await toast('Server pg2: active, weight 5');
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'On pg2' } });
    const id = created.body.project.id as string;
    await waitFor(async () => (await op('GET', `/projects/${id}`)).body.server === 'pg2');
    await serverRow('default').getByLabel('State of default').selectOption('active');
    await toast('Server default: active, weight 1');
    await tab('Projects').click();
    const projects = main().getByRole('table', { name: 'Projects' });
    const row = projects.getByRole('row').filter({ hasText: 'On pg2' });
    await shown(row.getByRole('cell', { name: 'pg2', exact: true }));
    await checkPage('operator-servers-04-projects');
  });

  it('shows SERVER_IN_USE when removing a server that holds a project', async () => {
    await tab('Servers').click();
    const row = serverRow('pg2');
    await shown(row.getByRole('cell', { name: '1', exact: true }));
    await row.getByRole('button', { name: 'Remove server pg2' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove server' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The change was refused' });
    await shown(alert);
    await shown(alert.getByText(/^SERVER_IN_USE/));
    await shown(alert.getByText(/HTTP 409/));
    await shown(serverRow('pg2'));
    await checkPage('operator-servers-05-in-use');
    expect(consoleErrors).toEqual([]);
  });
});
