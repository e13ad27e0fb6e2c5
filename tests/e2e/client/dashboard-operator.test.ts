// Issue 28 in a real browser (Debian's chromium through playwright-core): the tenant console's Plan section (every
// limit, "unlimited" for none, prices only when the operator set one), the operator's area at /operator (sign-in with
// an operator key, plans, default plan, tenants, projects, suspension, audit, operator keys) and the banner of a
// suspended project in the tenant console. Each page
// is saved as a screenshot (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  openSignedIn,
  pageChecks,
  shown,
  startConsole,
  tenantWithProject,
  textIs,
  until,
} from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let call: ReturnType<typeof client>;
const consoleErrors: string[] = [];
const OPERATOR_KEY = `top_${randomBytes(32).toString('base64url')}`;
let tenantId = '';
let apiKey = '';
const tenant = { email: `operator-${Date.now()}@example.com`, password: 'a long enough password 1' };
let token = '';
let projectId = '';

const { main, shot, checkPage } = pageChecks(() => page);

/** The cells of one plan's column in the tenant's Plan table (a limit per row), top to bottom. */
async function planColumn(planName: string): Promise<string[]> {
  return await main()
    .getByRole('table', { name: 'Plans' })
    .evaluate((table, name) => {
      const heads = [...table.querySelectorAll('thead th')].map((th) => th.textContent ?? '');
      const at = heads.findIndex((h) => h.startsWith(name));
      return [...table.querySelectorAll('tbody tr')].map((tr) => (tr.children[at]?.textContent ?? '').trim());
    }, planName);
}

beforeAll(async () => {
  ({ platform, base, browser } = await startConsole({ TESSERA_OPERATOR_KEY: OPERATOR_KEY }));
  call = client(platform.url);
  ({ tenantId, token, projectId, apiKey } = await tenantWithProject(platform.url, tenant, 'Governed'));
  ({ context, page } = await openSignedIn(browser, base, tenant, consoleErrors));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe("the tenant console's Plan section", () => {
  it('shows every limit, "unlimited" for none, and no price while no plan has one', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/settings/plan`);
    const plans = main().getByRole('table', { name: 'Plans' });
    await shown(plans);
    const limits = (await plans.getByRole('rowheader').allInnerTexts()).map((h) => h.trim());
    for (const h of [
      'Cron jobs',
      'Shortest cron interval',
      'Concurrent function runs',
      'Queued function runs',
      'Realtime subscribers',
      'Pending uploads',
      'Database rows',
      'Database size',
      'Database connections',
      'Database CPU per minute',
    ])
      expect(limits).toContain(h);
    expect(limits).toHaveLength(16);
    expect(limits).not.toContain('Price / month');
    // The self-hosted plan has no caps: every limit says so, none is a dash.
    expect(await planColumn('Self-hosted')).toEqual(Array(16).fill('unlimited'));
    const free = await planColumn('Free');
    expect(free[limits.indexOf('Cron jobs')]).toBe('5');
    expect(free[limits.indexOf('Shortest cron interval')]).toBe('10 s');
    expect(await main().getByText('—', { exact: true }).count()).toBe(0);
    await checkPage('operator-01-tenant-plan');
  });
});

/** No sideways scroll of the page itself at a phone's width (wide tables scroll inside their own box). */
async function noSidewaysScroll(name: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  await page.setViewportSize({ width: 1280, height: 860 });
  expect({ page: name, overflow }).toEqual({ page: name, overflow: 0 });
}

const tab = (name: string) => page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name });
const toast = (text: string | RegExp) => shown(page.locator('.toast').filter({ hasText: text }));

describe("the operator's area", () => {
  it('refuses a wrong key with a clear error, and says where the key is kept', async () => {
    await page.goto(`${base}/dashboard/operator`);
    await shown(page.getByRole('heading', { name: 'Operator sign-in' }));
    await shown(page.getByText(/kept in this browser tab only \(sessionStorage\)/));
    await page.getByLabel('Operator key').fill(`top_${randomBytes(32).toString('base64url')}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'This key was refused' });
    await shown(alert);
    await shown(alert.getByText(/\(HTTP 401\)/));
    // A tenant's token is not an operator key either.
    await page.getByLabel('Operator key').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await shown(page.getByRole('alert').getByText(/^FORBIDDEN/));
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await checkPage('operator-02-sign-in-refused');
    await noSidewaysScroll('sign-in');
  });

  it('signs in with the key (sessionStorage only) and lists every plan with every limit and the default', async () => {
    await page.getByLabel('Operator key').fill(OPERATOR_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const plans = main().getByRole('table', { name: 'Plans' });
    await shown(plans);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([OPERATOR_KEY]);
    expect(JSON.stringify(await page.evaluate(() => Object.values(localStorage)))).not.toContain(OPERATOR_KEY);
    const free = plans.getByRole('row').filter({ hasText: 'Free' });
    await shown(free.getByText('default'));
    const selfHosted = plans.getByRole('row').filter({ hasText: 'Self-hosted' });
    await shown(selfHosted.getByRole('cell', { name: 'unlimited' }).first());
    expect(await plans.getByRole('columnheader', { name: 'Price / month' }).count()).toBe(0);
    await checkPage('operator-03-plans');
    await noSidewaysScroll('plans');
  });

  it('creates a plan and edits it: an emptied limit is no limit, the price shows once set', async () => {
    await main().getByRole('link', { name: 'New plan' }).click();
    await shown(page.getByRole('heading', { name: 'New plan' }));
    await page.getByLabel('Plan id').fill('team');
    await page.getByLabel('Name', { exact: true }).fill('Team');
    await page.getByLabel('Price per month (cents)').fill('1500');
    await page.getByLabel('Cron jobs').fill('4');
    await page.getByLabel('Projects per tenant').fill('7');
    await checkPage('operator-04-plan-new');
    await noSidewaysScroll('plan form');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await toast('Created plan Team');
    const row = () => main().getByRole('table', { name: 'Plans' }).getByRole('row').filter({ hasText: 'Team' });
    await shown(row().getByRole('cell', { name: '$15.00' }));
    await shown(row().getByRole('cell', { name: '4', exact: true }));
    await row().getByRole('link', { name: 'Team' }).click();
    await shown(page.getByRole('heading', { name: 'Edit plan Team' }));
    expect(await page.getByLabel('Cron jobs').inputValue()).toBe('4');
    await page.getByLabel('Cron jobs').fill('');
    await page.getByLabel('Shortest cron interval').fill('30');
    await page.getByRole('button', { name: 'Save plan' }).click();
    await toast('Saved plan Team');
    await shown(row().getByRole('cell', { name: '30 s' }));
    const api = await call('GET', '/admin/api/v1/plans', { token: OPERATOR_KEY });
    const team = api.body.plans.find((p: { id: string }) => p.id === 'team');
    expect(team).toMatchObject({ price_cents_per_month: 1500 });
    expect(team.limits).toMatchObject({ max_cron_jobs: null, min_cron_interval_seconds: 30, max_projects: 7 });
  });

  it('sets the default plan for new tenants', async () => {
    await page.getByLabel('Default plan for new tenants').selectOption('team');
    await page.getByRole('button', { name: 'Save default plan' }).click();
    await toast('New tenants now start on team');
    await shown(
      main().getByRole('table', { name: 'Plans' }).getByRole('row').filter({ hasText: 'Team' }).getByText('default'),
    );
    expect((await call('GET', '/admin/api/v1/settings', { token: OPERATOR_KEY })).body.default_plan).toBe('team');
  });

  it("shows a tenant's usage and moves it to another plan; a plan in use is not deleted (PLAN_IN_USE shown)", async () => {
    await tab('Tenants').click();
    await page.getByLabel('Search tenants by e-mail or name').fill(tenant.email);
    await page.getByRole('button', { name: 'Search' }).click();
    const tenants = main().getByRole('table', { name: 'Tenants' });
    await until(
      () => tenants.getByRole('row').count(),
      (n) => n === 2,
      'one tenant found',
    );
    // The tenant's usage: all its projects together, gathered from storage, data and functions through the router.
    const row = tenants.getByRole('row').filter({ hasText: tenant.email });
    await shown(row.getByRole('cell', { name: '0 B in 0 files' }));
    await shown(row.getByRole('cell', { name: /^\d[\d,]* rows · [\d.]+ [KMG]?B$/ }));
    await shown(row.getByRole('cell', { name: '0 runs this month · 0 running · 0 cron jobs' }));
    await page.getByLabel(`Plan of ${tenant.email}`).selectOption('team');
    await toast(`${tenant.email} is now on Team`);
    expect((await call('GET', '/auth/api/v1/tenant', { token })).body.tenant.plan.id).toBe('team');
    const seen = await call('GET', `/admin/api/v1/tenants/${tenantId}`, { token: OPERATOR_KEY });
    expect(seen.body).toMatchObject({ plan: { id: 'team' }, project_count: 1 });
    await checkPage('operator-05-tenants');
    await noSidewaysScroll('tenants');
    await tab('Plans').click();
    const team = main().getByRole('table', { name: 'Plans' }).getByRole('row').filter({ hasText: 'Team' });
    await team.getByRole('button', { name: 'Delete plan Team' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Could not delete the plan' });
    await shown(alert.getByText(/^PLAN_IN_USE/));
  });

  it('suspends a project: the tenant console shows it suspended by the operator; resume works again', async () => {
    await tab('Projects').click();
    const projects = main().getByRole('table', { name: 'Projects' });
    const row = projects.getByRole('row').filter({ hasText: projectId });
    await shown(row.getByText(tenant.email));
    await shown(row.getByRole('cell', { name: '0 B in 0 files' }));
    // Database and functions usage come from the data and functions subgraphs through the router.
    await shown(row.getByRole('cell', { name: /^\d[\d,]* rows( of [\d,]+)? · [\d.]+ [KMG]?B/ }));
    await shown(row.getByRole('cell', { name: '0 runs this month · 0 running · 0 cron jobs' }));
    await row.getByRole('button', { name: 'Suspend project Governed' }).click();
    await row.getByLabel('Reason for suspending project Governed').fill('abuse report');
    await row.getByRole('button', { name: 'Suspend', exact: true }).click();
    await toast('Suspended Governed');
    await shown(row.getByText('abuse report', { exact: false }));
    await checkPage('operator-06-projects');
    await noSidewaysScroll('projects');
    const refused = await call('GET', '/storage/api/v1/storage/policies', { apiKey });
    expect(refused.body.error?.code).toBe('PROJECT_SUSPENDED');
    // The tenant's own console, in another tab: a plain banner, not a generic failure.
    const tenantPage = await context.newPage();
    await tenantPage.goto(`${base}/dashboard/p/${projectId}/storage`);
    await shown(tenantPage.getByRole('alert').getByText('This project is suspended by the operator').first());
    // Once above the page, with the operator's reason, whatever the page was doing.
    await shown(tenantPage.locator('main > .error-box.suspended').getByText('Reason: abuse report'));
    await tenantPage.goto(`${base}/dashboard/`);
    await shown(tenantPage.getByRole('row').filter({ hasText: 'Governed' }).getByText('suspended by the operator'));
    await pageChecks(() => tenantPage).shot('operator-07-tenant-suspended');
    await tenantPage.close();
    await row.getByRole('button', { name: 'Resume project Governed' }).click();
    await toast('Resumed Governed');
    await until(
      async () => (await call('GET', '/storage/api/v1/storage/policies', { apiKey })).status,
      (s) => s === 200,
      'the project answering again',
    );
  });

  it('lists the actions in the audit (who, what, target), filtered by action', async () => {
    await tab('Audit').click();
    const audit = main().getByRole('table', { name: 'Audit' });
    for (const action of [
      'plan.create',
      'plan.update',
      'settings.default_plan',
      'tenant.plan',
      'project.suspend',
      'project.resume',
    ])
      await shown(audit.getByRole('cell', { name: action, exact: true }));
    await shown(audit.getByRole('row').filter({ hasText: 'project.suspend' }).getByText(projectId));
    await shown(audit.getByRole('cell', { name: 'bootstrap' }).first());
    await checkPage('operator-08-audit');
    await noSidewaysScroll('audit');
    await page.getByLabel('Action').fill('project.suspend');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(
      () => audit.getByRole('row').count(),
      (n) => n === 2,
      'only the suspension',
    );
  });

  it('creates an operator key shown once with a copy button, and revokes it', async () => {
    await tab('Operator keys').click();
    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const value = page.getByTestId('value-Operator key');
    await shown(value);
    const key = (await value.innerText()).trim();
    expect(key).toMatch(/^top_/);
    await shown(page.getByRole('button', { name: 'Copy Operator key' }));
    expect((await call('GET', '/admin/api/v1/plans', { token: key })).status).toBe(200);
    await checkPage('operator-09-keys');
    await noSidewaysScroll('keys');
    const keys = main().getByRole('table', { name: 'Operator keys' });
    await keys.getByRole('button', { name: 'Revoke key laptop' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await toast('Revoked the operator key');
    await shown(keys.getByRole('row').filter({ hasText: 'laptop' }).getByText('revoked'));
    expect((await call('GET', '/admin/api/v1/plans', { token: key })).status).toBe(401);
  });

  it("shows the operator's price in the tenant's Plan section; sign out forgets the key", async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/settings/plan`);
    const plans = main().getByRole('table', { name: 'Plans' });
    await shown(plans.getByRole('rowheader', { name: 'Price / month' }));
    const team = await planColumn('Team');
    expect(team[team.length - 1]).toBe('$15.00');
    const free = await planColumn('Free');
    expect(free[free.length - 1]).toBe('');
    // A suspended account: its console says so instead of a generic failure; resumed, it works again.
    const op = { token: OPERATOR_KEY };
    expect((await call('POST', `/admin/api/v1/tenants/${tenantId}/suspend`, { ...op, body: {} })).status).toBe(200);
    await page.goto(`${base}/dashboard/`);
    await shown(page.getByRole('alert').getByText('This account is suspended by the operator'));
    await shot('operator-10-tenant-account-suspended');
    expect((await call('POST', `/admin/api/v1/tenants/${tenantId}/resume`, op)).status).toBe(200);
    await page.reload();
    await shown(page.getByRole('combobox', { name: 'Project' }));
    expect(await page.getByText('This account is suspended by the operator').count()).toBe(0);
    await page.goto(`${base}/dashboard/operator/plans`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await shown(page.getByRole('heading', { name: 'Operator sign-in' }));
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The tenant's own session is untouched.
    await page.goto(`${base}/dashboard/`);
    await textIs(page.getByRole('heading', { level: 1 }).first(), 'Projects');
    expect(consoleErrors.filter((e) => !/40[134]|Failed to load resource/.test(e))).toEqual([]);
  });
});
