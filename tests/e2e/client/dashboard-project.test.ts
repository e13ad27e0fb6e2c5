// The project console's identity and realtime settings in a real browser (Debian's chromium, headless, driven by
// playwright-core) against a live Tessera with an SMTP sink (issue 26, 3): several OIDC clients (add one with its grant
// types and scopes, edit them, rotate a secret shown at once, delete with confirmation), adding an end-user with a
// password and inviting one by e-mail (the mail and its link checked), and realtime switches offered only for the
// project's tables. Every result is checked through the API too; each page is scanned with axe-core (no serious or
// critical violation) and saved as a screenshot in tests/artifacts/dashboard.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import {
  contains,
  count,
  gone,
  openConsole,
  pageChecks,
  sendSignUp,
  shown,
  until,
} from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { startMailbox } from '../identity/identity-fixtures.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let base: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const tenant = { email: `proj-${Date.now()}@example.com`, password: 'a long enough password 1' };
let projectId = '';

/** The stored session's access token (the API checks outside the browser use it). */
async function tenantToken(): Promise<string> {
  const session = JSON.parse((await page.evaluate(() => localStorage.getItem('tessera.dashboard.session')))!) as {
    access_token: string;
  };
  return session.access_token;
}

/** A REST call as the signed-in tenant. */
async function asTenant(method: string, p: string, body?: unknown) {
  return await client(platform.url)(method, p, { token: await tenantToken(), ...(body ? { body } : {}) });
}

/** A REST call with the project's secret key. */
async function asProject(method: string, p: string, body?: unknown) {
  const key = (await asTenant('GET', `/auth/api/v1/projects/${projectId}`)).body.project.api_key as string;
  return await client(platform.url)(method, p, { apiKey: key, ...(body ? { body } : {}) });
}

const clientsOf = async () =>
  (await asTenant('GET', `/auth/api/v1/projects/${projectId}/oidc-clients`)).body.oidc_clients as {
    client_id: string;
    client_secret: string;
    name: string;
    grant_types: string[];
    allowed_scopes: string[];
    redirect_uris: string[];
    public: boolean;
  }[];

const { main, checkPage } = pageChecks(() => page);

const toast = (m: string | RegExp) => contains(page.locator('.toasts'), m);

beforeAll(async () => {
  mailbox = await startMailbox();
  ({ platform, base, browser, page } = await openConsole(
    { TESSERA_SMTP_URL: mailbox.url, TESSERA_MAIL_FROM: 'Tessera <idp@example.com>' },
    consoleErrors,
  ));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await mailbox?.close();
});

describe('the project console: OIDC clients, users, realtime tables', () => {
  it('signs a tenant up and creates a project', async () => {
    await page.goto(`${base}/dashboard/sign-up`);
    await sendSignUp(page, { ...tenant, name: 'Project Owner' });
    await shown(main().getByText('No projects yet'));
    await page.getByLabel('Project name').fill('Console');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/dashboard\/p\/[^/]+\/settings/);
    projectId = /\/p\/([^/]+)\//.exec(page.url())![1]!;
  });

  it('adds an OIDC client with its grant types, scopes and redirect URI', async () => {
    await page.getByRole('link', { name: 'OIDC clients' }).click();
    await shown(main().getByRole('region', { name: 'Default client' }));
    await page.getByRole('button', { name: 'Add client' }).click();
    const form = main().getByRole('region', { name: 'Add an OIDC client' });
    await form.getByLabel('Client name').fill('Mobile app');
    await form.getByRole('checkbox', { name: /^Public client/ }).check();
    await form.getByRole('checkbox', { name: 'password', exact: true }).check();
    await form.getByLabel('Redirect URIs').fill('com.example.app:/callback\nhttps://app.example.com/cb');
    await form.getByLabel('Allowed scopes').fill('openid profile offline_access');
    // A custom-scheme redirect URI is refused by the API, and the error names the field.
    await form.getByRole('button', { name: 'Add client' }).click();
    await contains(form.getByRole('alert'), 'redirectUris[0]');
    await form.getByLabel('Redirect URIs').fill('https://app.example.com/cb');
    await form.getByRole('button', { name: 'Add client' }).click();
    await toast('OIDC client Mobile app added');
    const card = main().getByRole('region', { name: 'Mobile app' });
    await shown(card);
    await contains(card, 'Public (PKCE)');
    const made = (await clientsOf()).find((c) => c.name === 'Mobile app');
    expect(made).toMatchObject({
      public: true,
      grant_types: ['authorization_code', 'refresh_token', 'password'],
      allowed_scopes: ['openid', 'profile', 'offline_access'],
      redirect_uris: ['https://app.example.com/cb'],
    });
    await checkPage('30-settings-oidc-clients');
  });

  it('edits the grant types and scopes of a client', async () => {
    const card = main().getByRole('region', { name: 'Mobile app' });
    await card.getByRole('checkbox', { name: 'password', exact: true }).uncheck();
    await card.getByLabel('Allowed scopes').fill('openid email');
    await card.getByRole('button', { name: 'Save client' }).click();
    await toast('OIDC client saved');
    await until(
      async () => (await clientsOf()).find((c) => c.name === 'Mobile app'),
      (c) => c?.grant_types.join() === 'authorization_code,refresh_token' && c.allowed_scopes.join() === 'openid,email',
      'the edited client',
    );
    // A public client cannot get client_credentials: the error is shown, nothing changes.
    await card.getByRole('checkbox', { name: 'client_credentials', exact: true }).check();
    await card.getByRole('button', { name: 'Save client' }).click();
    await contains(card.getByRole('alert'), 'client_credentials');
    expect((await clientsOf()).find((c) => c.name === 'Mobile app')?.grant_types).toEqual([
      'authorization_code',
      'refresh_token',
    ]);
  });

  it('rotates a secret after asking and shows the new one at once', async () => {
    const card = main().getByRole('region', { name: 'Default client' });
    const before = (await clientsOf()).find((c) => c.name === 'Default client')!.client_secret;
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const fresh = card.getByTestId('value-New client secret');
    await shown(fresh);
    const shownSecret = await fresh.innerText();
    expect(shownSecret).toMatch(/^tss_/);
    expect(shownSecret).not.toBe(before);
    expect((await clientsOf()).find((c) => c.name === 'Default client')!.client_secret).toBe(shownSecret);
  });

  it('deletes a client after confirmation; the last client cannot be deleted', async () => {
    const card = main().getByRole('region', { name: 'Mobile app' });
    await card.getByRole('button', { name: 'Delete client Mobile app' }).click();
    const dialog = page.getByRole('dialog');
    await contains(dialog, 'secret stops working at once');
    await page.keyboard.press('Escape');
    await gone(page.getByRole('dialog'));
    expect((await clientsOf()).map((c) => c.name)).toEqual(['Default client', 'Mobile app']);
    await card.getByRole('button', { name: 'Delete client Mobile app' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete client' }).click();
    await toast('OIDC client Mobile app deleted');
    await gone(main().getByRole('region', { name: 'Mobile app' }));
    expect((await clientsOf()).map((c) => c.name)).toEqual(['Default client']);
    // The only client left offers no delete button, and says why.
    await count(main().getByRole('button', { name: /^Delete client/ }), 0);
    await shown(main().getByText('A project keeps at least one client'));
  });

  it('adds an end-user with a password, who can sign in', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Authentication' }).click();
    await shown(main().getByText('No users yet'));
    const form = main().getByRole('region', { name: 'Add a user' });
    await form.getByLabel('E-mail', { exact: true }).fill('added@example.com');
    await form.getByLabel('Name (optional)').fill('Added Person');
    await form.getByRole('checkbox', { name: /^Invite by e-mail/ }).uncheck();
    await form.getByLabel('Password', { exact: true }).fill('an added password');
    await form.getByRole('button', { name: 'Add user' }).click();
    await toast('User added@example.com added');
    await contains(main().getByRole('table'), 'added@example.com');
    const c = (await clientsOf())[0]!;
    const signIn = await fetch(`${platform.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'added@example.com',
        password: 'an added password',
        client_id: c.client_id,
        client_secret: c.client_secret,
      }),
    });
    expect(signIn.status).toBe(200);
  });

  it('invites an end-user by e-mail: the mail is an invitation whose link sets the password', async () => {
    const form = main().getByRole('region', { name: 'Add a user' });
    await form.getByRole('checkbox', { name: /^Invite by e-mail/ }).check();
    await form.getByLabel('E-mail', { exact: true }).fill('invited@example.com');
    await form.getByRole('button', { name: 'Send invitation' }).click();
    await toast('Invitation sent to invited@example.com');
    await contains(main().getByRole('table'), 'invited@example.com');
    await checkPage('31-auth-users-add');
    const first = await mailbox.waitFor('invited@example.com', /invited/);
    expect(first.text).toContain('You have been invited to create an account');
    const linkOf = (text: string) => /(http\S+\/password\/reset\/confirm\?token=(tpr_[A-Za-z0-9_-]+))/.exec(text)!;
    // The invitation again, from the user's page (asking first): a second mail with a new link.
    await main().getByRole('link', { name: 'invited@example.com' }).click();
    await page.getByRole('button', { name: 'Resend invitation' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Send invitation' }).click();
    await toast('Invitation sent again');
    await checkPage('32-auth-user-invited');
    const mail = await mailbox.waitFor('invited@example.com', /invited/);
    expect(linkOf(mail.text)[2]).not.toBe(linkOf(first.text)[2]);
    const link = linkOf(mail.text)[1]!;
    // The end-user opens the link and chooses a password on the hosted page.
    const invitee = await browser.newPage();
    await invitee.goto(link);
    await invitee.getByLabel('New password').fill('my chosen password');
    await invitee.getByRole('button', { name: 'Change password' }).click();
    await invitee.getByText('Your password is changed').waitFor({ state: 'visible' });
    await invitee.close();
    const users = (await asProject('GET', '/admin/users?search=invited')).body.users;
    expect(users).toEqual([expect.objectContaining({ email: 'invited@example.com', email_verified: true })]);
    // Choosing the password used up the first link too.
    const stale = await client(platform.url)('POST', '/password/reset/confirm', {
      body: { token: linkOf(first.text)[2], new_password: 'yet another password' },
    });
    expect(stale.status).toBe(401);
    // Once the address is confirmed, the user's page no longer offers the invitation.
    await page.reload();
    await shown(main().getByText('verified', { exact: true }));
    await count(page.getByRole('button', { name: 'Resend invitation' }), 0);
  });

  it("offers realtime switches for the project's tables only, and turns one on", async () => {
    for (const t of ['orders', 'customers'])
      expect((await asProject('POST', '/v1/rawSQL', { sql: `create table ${t} (id serial primary key)` })).status).toBe(
        200,
      );
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Database' }).click();
    const table = main().getByRole('table');
    await contains(table, 'orders');
    // The switch shows the server's state: it turns on once the API has answered.
    const sw = main().getByRole('checkbox', { name: 'Stream changes of orders' });
    await sw.click();
    await toast('Realtime on for orders');
    await until(() => sw.isChecked(), Boolean, 'the switch on');
    const pubs = (await asTenant('GET', `/auth/api/v1/projects/${projectId}/publications`)).body.publications;
    expect(pubs).toEqual([expect.objectContaining({ table: 'orders', enabled: true })]);
    // No free-text table name anywhere: the switches are the table list's.
    await count(main().getByRole('checkbox', { name: /^Stream changes of/ }), 2);
    await checkPage('34-database-realtime');
  });

  it('offers to turn off a switch left on for a table dropped by SQL', async () => {
    expect((await asProject('POST', '/v1/rawSQL', { sql: 'drop table orders' })).status).toBe(200);
    await page.reload();
    await count(main().getByRole('checkbox', { name: /^Stream changes of/ }), 1);
    await checkPage('35-database-realtime-dropped-table');
    await page.getByRole('button', { name: 'Turn off realtime for orders' }).click();
    await toast('Realtime off for orders');
    await gone(page.getByRole('button', { name: 'Turn off realtime for orders' }));
    const pubs = (await asTenant('GET', `/auth/api/v1/projects/${projectId}/publications`)).body.publications;
    expect(pubs).toEqual([expect.objectContaining({ table: 'orders', enabled: false })]);
    // It cannot be turned on again while the table is gone.
    expect(
      (await asTenant('POST', `/auth/api/v1/projects/${projectId}/publications`, { table: 'orders', enabled: true }))
        .status,
    ).toBe(400);
  });

  it('logged no console errors', () => {
    // A refused request (the 400s above) logs a failed resource load in chromium: only those are expected.
    expect(consoleErrors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
