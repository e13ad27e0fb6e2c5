// The dashboard keeps a developer signed in (issue 26): with 5-second access tokens, two tabs browse every page of the
// dashboard (found by following its navigation and tab links, so a new page is covered without touching this test) for
// 60 s, reloading and making their calls at once through a dozen token lifetimes, and neither is ever signed out. The
// access token is refreshed ahead of its expiry, one refresh at a time across the tabs (a tab takes the session
// another tab already refreshed), so no refresh token is ever presented twice and the server never revokes the
// session. Debian's chromium, headless (tests/support/browser.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { createClient } from '../../../packages/client/src/index.ts';
import { openSignedIn, startConsole } from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';

const password = 'correct horse battery staple';
/** How long the tabs browse. */
const BROWSE_MS = 60_000;

let platform: TestPlatform;
let browser: Browser;
let email: string;
let projectId: string;

beforeAll(async () => {
  ({ platform, browser } = await startConsole({ TESSERA_ACCESS_TOKEN_TTL: '5' }));
  const c = createClient({ url: platform.url });
  email = `tabs-${Date.now()}@example.com`;
  await c.tenant.signup({ email, password });
  await c.tenant.login({ email, password });
  projectId = (await c.tenant.projects.create('Tabs')).id;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
}, 60_000);

/** Whether the page shows the sign-in form (the session ended). */
const signedOut = async (page: Page) =>
  (await page.getByRole('heading', { name: 'Sign in to Tessera' }).count()) > 0 ||
  (await page.getByText('Your session ended').count()) > 0;

describe('a dashboard session with short-lived access tokens', () => {
  it('stays signed in across two tabs browsing every page through several token lifetimes', async () => {
    const refreshes: number[] = [];
    const { context, page: first } = await openSignedIn(browser, platform.url, { email, password }, [], {
      prepare: async (context) =>
        context.on('response', (res) => {
          if (res.url().endsWith('/auth/api/v1/tenant/refresh')) refreshes.push(res.status());
        }),
    });
    const second = await context.newPage();
    const tabs = [first, second];

    // Every page: the links of the navigation and of each page's tabs, followed from the project's settings.
    const pages = new Set<string>(['/dashboard/', '/dashboard/account']);
    const queue = [`/dashboard/p/${projectId}/settings`];
    while (queue.length > 0 && pages.size < 80) {
      const at = queue.shift()!;
      if (pages.has(at) && at !== queue[0]) continue;
      pages.add(at);
      await first.goto(`${platform.url}${at}`);
      await first.waitForLoadState('networkidle');
      const hrefs = await first.$$eval('nav a[href], [role=tablist] a[href]', (as) =>
        as.map((a) => new URL((a as HTMLAnchorElement).href).pathname),
      );
      for (const h of hrefs) if (h.startsWith('/dashboard/') && !pages.has(h) && !queue.includes(h)) queue.push(h);
    }
    const list = [...pages];
    expect(list.length).toBeGreaterThanOrEqual(15);

    // Browse for a minute (a dozen 5-second lifetimes) and until the tabs together refreshed at least four times,
    // both tabs at once on every step, reloading now and then.
    const started = Date.now();
    for (let step = 0; Date.now() - started < BROWSE_MS || refreshes.length < 4; step++) {
      if (step > 2000) throw new Error(`only ${refreshes.length} refreshes after ${step} steps`);
      const at = list[step % list.length]!;
      await Promise.all(
        tabs.map(async (tab, i) => {
          if (step % 4 === 3) await tab.reload();
          else await tab.goto(`${platform.url}${list[(step + i * 3) % list.length]}`);
          await tab.waitForLoadState('networkidle');
        }),
      );
      for (const tab of tabs)
        expect({ step, at, signedOut: await signedOut(tab) }).toEqual({ step, at, signedOut: false });
    }
    expect(refreshes.length).toBeGreaterThanOrEqual(8);
    // Every refresh was answered with a new pair: none presented a rotated token, none revoked the session.
    expect(refreshes.filter((s) => s !== 200)).toEqual([]);
    // The session both tabs share is still good on the server.
    const stored = JSON.parse((await first.evaluate(() => localStorage.getItem('tessera.dashboard.session')))!) as {
      access_token: string;
      refresh_token: string;
    };
    const me = await waitFor(async () => {
      const res = await fetch(`${platform.url}/auth/api/v1/tenant`, {
        headers: { authorization: `Bearer ${stored.access_token}` },
      });
      return res.status === 200 || res.status === 401 ? res.status : undefined;
    });
    // (The stored access token may just have expired: the refresh token then still works.)
    if (me === 401)
      expect((await createClient({ url: platform.url }).tenant.refresh(stored.refresh_token)).refresh_token).toMatch(
        /^tsr_/,
      );
    for (const tab of tabs) expect(await signedOut(tab)).toBe(false);
    await context.close();
  }, 240_000);
});
