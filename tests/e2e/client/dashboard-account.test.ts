// The developer account in the dashboard, in a real browser (Debian's chromium, headless) against a live Tessera whose
// platform mail goes to a real SMTP server: signing up leaves the address at the projects (not /sign-up); two-factor
// authentication shows ten recovery codes once; a recovery code signs in when the phone is lost; forgot password
// mails a link that opens the reset page; the password and the e-mail address change (the new address confirmed from
// its mail); other sessions are listed and ended, "sign out everywhere" ends this one too; the account is deleted
// with its projects after typing its address. Every page is scanned with axe-core.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { contains, count, openConsole, pageChecks, sendSignUp, shown, until } from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { nextCode } from '../../support/totp.ts';
import { startMailbox, tokenOf } from '../identity/identity-fixtures.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let base: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const email = `account-${Date.now()}@example.com`;
let password = 'a long enough password 1';
let secret = '';
let lastCode = '';
let recoveryCodes: string[] = [];

const { main, checkPage } = pageChecks(() => page);

async function signIn(how: { code?: string; recovery?: string } = {}): Promise<void> {
  await shown(page.getByRole('heading', { name: 'Sign in to Tessera' }));
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (how.code || how.recovery) {
    if (how.recovery) {
      await page.getByRole('button', { name: 'Lost your phone? Use a recovery code' }).click();
      await page.getByLabel('Recovery code').fill(how.recovery);
    } else await page.getByLabel('Authentication code').fill(how.code!);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await shown(page.getByRole('heading', { name: 'Projects' }));
}

beforeAll(async () => {
  mailbox = await startMailbox();
  // A refused call shows in the console as a failed resource load; the page shows the error itself.
  ({ platform, base, browser, page } = await openConsole({ TESSERA_SMTP_URL: mailbox.url }, consoleErrors, {
    clipboard: true,
    ignoreConsole: /Failed to load resource/,
  }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
  await mailbox?.close();
});

describe('the developer account in the dashboard', () => {
  it('signs up and leaves the address at the projects, not at /sign-up', async () => {
    await page.goto(`${base}/dashboard/sign-up`);
    await sendSignUp(page, { name: 'Account Tester', email, password });
    await shown(page.getByRole('heading', { name: 'Projects' }));
    await until(
      async () => new URL(page.url()).pathname,
      (p) => p === '/dashboard/' || p === '/dashboard',
      'the address to follow the page',
    );
    await page.getByLabel('Project name').fill('Doomed');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/dashboard\/p\/[^/]+\/settings/);
  });

  it('turns on two-factor authentication and shows ten recovery codes once', async () => {
    await page.goto(`${base}/dashboard/account`);
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    await page.getByRole('button', { name: 'Reveal Secret' }).click();
    secret = (await main().getByTestId('secret-Secret').innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]+$/);
    lastCode = await nextCode(secret);
    await page.getByLabel('Code from the app').fill(lastCode);
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByRole('list', { name: 'Your recovery codes' });
    await count(list.getByRole('listitem'), 10);
    recoveryCodes = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
    for (const c of recoveryCodes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    await checkPage('account-recovery-codes');
    await page.getByRole('button', { name: 'I saved them' }).click();
    await contains(main(), 'Recovery codes left: 10 of 10');
    // Shown once: a reload does not show them again.
    await page.reload();
    await contains(main(), 'Recovery codes left: 10 of 10');
    expect(await page.getByRole('list', { name: 'Your recovery codes' }).count()).toBe(0);
  });

  it('signs in with a recovery code when the phone is lost', async () => {
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
    await signIn({ recovery: recoveryCodes[0]! });
    await page.goto(`${base}/dashboard/account`);
    await contains(main(), 'Recovery codes left: 9 of 10');
  });

  it('lists sessions, ends another one, and signs out the others', async () => {
    const call = client(platform.url);
    const other = await call('POST', '/auth/api/v1/tenant/login', {
      body: { email, password, recovery_code: recoveryCodes[1] },
    });
    expect(other.status).toBe(200);
    const third = await call('POST', '/auth/api/v1/tenant/login', {
      body: { email, password, recovery_code: recoveryCodes[2] },
    });
    await page.reload();
    const sessions = page.getByRole('table', { name: 'Sessions' });
    await count(sessions.locator('tbody tr'), 3);
    await contains(sessions, 'This session');
    await checkPage('account-sessions');
    await sessions
      .getByRole('button', { name: /^End the session/ })
      .first()
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'End session' }).click();
    await count(sessions.locator('tbody tr'), 2);
    await page.getByRole('button', { name: 'Sign out other sessions' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out others' }).click();
    await count(sessions.locator('tbody tr'), 1);
    for (const s of [other, third])
      expect((await call('GET', '/auth/api/v1/tenant', { token: s.body.access_token })).status).toBe(401);
  });

  it('changes the password, asking for the current one', async () => {
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill('not my password');
    await form.getByLabel('New password', { exact: true }).fill('a second long password');
    await form.getByLabel('New password again').fill('a second long password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await contains(form.getByRole('alert'), 'current_password');
    // Still signed in: a refused change is not an ended session.
    await shown(page.getByRole('heading', { name: 'Account' }));
    await form.getByLabel('Current password').fill(password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await contains(page.getByRole('status').last(), 'Password changed');
    password = 'a second long password';
  });

  it('changes the e-mail address once the link mailed to the new address is opened', async () => {
    const form = page.getByRole('form', { name: 'Change e-mail address' });
    const moved = email.replace('account-', 'moved-');
    await form.getByLabel('New e-mail address').fill(moved);
    await form.getByLabel('Current password').fill(password);
    await form.getByRole('button', { name: 'Send confirmation link' }).click();
    await contains(main(), `We sent a confirmation link to ${moved}`);
    const link = /http\S+confirm-email\?token=\S+/.exec((await mailbox.waitFor(moved, /Confirm your new/)).text)![0];
    await page.goto(link.replace(/^http:\/\/[^/]+/, base));
    await shown(page.getByRole('heading', { name: 'Confirm your new e-mail address' }));
    await checkPage('confirm-email');
    await page.getByRole('button', { name: 'Confirm address' }).click();
    await contains(main().getByRole('status'), `is now ${moved}`);
    await mailbox.waitFor(email, /is now/);
    // The old address no longer signs in; the new one does (further down).
    expect(
      (await client(platform.url)('POST', '/auth/api/v1/tenant/login', { body: { email, password } })).status,
    ).toBe(401);
    (globalThis as { movedTo?: string }).movedTo = moved;
  });

  it('resets a forgotten password through the mailed link', async () => {
    const moved = (globalThis as { movedTo?: string }).movedTo!;
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await shown(page.getByRole('heading', { name: 'Reset your password' }));
    await checkPage('forgot-password');
    await page.getByLabel('E-mail').fill(moved);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await contains(main().getByRole('status'), 'is on its way');
    const mail = await mailbox.waitFor(moved, /reset the password/);
    expect(tokenOf(mail)).toMatch(/^tar_/);
    const link = /http\S+reset-password\?token=\S+/.exec(mail.text)![0];
    await page.goto(link.replace(/^http:\/\/[^/]+/, base));
    await shown(page.getByRole('heading', { name: 'Choose a new password' }));
    await checkPage('reset-password');
    await page.getByLabel('New password', { exact: true }).fill('a third long password');
    await page.getByLabel('New password again').fill('a third long password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await contains(main().getByRole('status'), 'Your password is changed');
    // The link works once.
    await page.reload();
    await page.getByLabel('New password', { exact: true }).fill('a fourth long password');
    await page.getByLabel('New password again').fill('a fourth long password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await contains(main().getByRole('alert'), 'INVALID_LINK');
    password = 'a third long password';
    await page.goto(`${base}/dashboard/`);
    await shown(page.getByRole('heading', { name: 'Sign in to Tessera' }));
    await page.getByLabel('E-mail').fill(moved);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    lastCode = await nextCode(secret, lastCode);
    await page.getByLabel('Authentication code').fill(lastCode);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await shown(page.getByRole('heading', { name: 'Projects' }));
  });

  it('deletes the account and its projects after the address is typed', async () => {
    const moved = (globalThis as { movedTo?: string }).movedTo!;
    await page.goto(`${base}/dashboard/account`);
    await checkPage('account');
    const form = page.getByRole('form', { name: 'Delete the account' });
    await form.getByLabel('Current password').fill(password);
    await form.getByRole('button', { name: 'Delete account…' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByRole('button', { name: 'Delete account' }).isDisabled()).resolves.toBe(true);
    await dialog.getByLabel(`Type ${moved} to confirm`).fill(moved);
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    await shown(page.getByRole('heading', { name: 'Sign in to Tessera' }));
    await contains(main(), 'Your account was deleted');
    expect(
      (await client(platform.url)('POST', '/auth/api/v1/tenant/login', { body: { email: moved, password } })).status,
    ).toBe(401);
    expect(consoleErrors).toEqual([]);
  });
});
