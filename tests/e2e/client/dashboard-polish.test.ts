// Issue 26 in a real browser (Debian's chromium through playwright-core): the project's Requests page (the request
// log, filtered), and the console defects of the issue, each with the check that failed before its fix. Each new page is
// saved as a screenshot (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import {
  count,
  openSignedIn,
  pageChecks,
  shown,
  startConsole,
  tenantWithProject,
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
const tenant = { email: `polish-${Date.now()}@example.com`, password: 'a long enough password 1' };
let token = '';
let projectId = '';
let apiKey = '';
let publishableKey = '';

const { main, shot, checkPage } = pageChecks(() => page);

/** The texts of every element of the locator, once `ok` holds for them. */
const textsOf = async (l: Locator, ok: (texts: string[]) => boolean, what: string) =>
  await until(() => l.allInnerTexts(), ok, what);

beforeAll(async () => {
  ({ platform, base, browser } = await startConsole());
  call = client(platform.url);
  ({ token, projectId, apiKey, publishableKey } = await tenantWithProject(platform.url, tenant, 'Polish'));
  ({ context, page } = await openSignedIn(browser, base, tenant, consoleErrors));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('the Requests page', () => {
  it("lists the project's requests with route, status, latency, request id and credential", async () => {
    const made = [
      await call('GET', '/storage/api/v1/storage/policies', { apiKey }),
      await call('POST', '/register', { apiKey: publishableKey, body: { email: 'not-an-address' } }),
      await call('POST', `/webhooks/${projectId}/no-such-receiver`, { body: {} }),
    ];
    expect(made.map((r) => r.status)).toEqual([200, 400, 404]);
    await page.goto(`${base}/dashboard/p/${projectId}/settings`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
    await page.waitForURL(/\/p\/[^/]+\/requests$/);
    await shown(page.getByRole('heading', { name: 'Requests', level: 1 }));
    // Rows are written about a second after the request: refresh until the last one is there.
    const last = made[2]!.headers.get('x-request-id')!;
    await until(
      async () => {
        if ((await main().getByText(last).count()) === 0) await page.getByRole('button', { name: 'Refresh' }).click();
        return await main().getByText(last).count();
      },
      (n) => n > 0,
      'the webhook request in the table',
    );
    const table = main().getByRole('table', { name: 'Requests' });
    for (const r of made) await shown(table.getByText(r.headers.get('x-request-id')!));
    const webhookRow = table.getByRole('row').filter({ hasText: last });
    await shown(webhookRow.getByText('/webhooks/:project_id/:slug'));
    await shown(webhookRow.getByText('404'));
    await shown(webhookRow.getByText('Anonymous'));
    await shown(
      table
        .getByRole('row')
        .filter({ hasText: made[0]!.headers.get('x-request-id')! })
        .getByText('Secret key'),
    );
    await checkPage('polish-01-requests');
  });

  it('filters by status class, credential and route text', async () => {
    const statuses = () => main().getByRole('table', { name: 'Requests' }).locator('tbody .badge');
    await page.getByLabel('Status').selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    const four = await textsOf(
      statuses(),
      (t) => t.length >= 2 && t.every((s) => /^4\d\d$/.test(s.trim())),
      'only 4xx statuses',
    );
    expect(four.length).toBeGreaterThanOrEqual(2);
    // The filter is in the address: a reload (or a shared link) shows the same view.
    expect(new URL(page.url()).searchParams.get('status')).toBe('4xx');
    await page.reload();
    await textsOf(
      statuses(),
      (t) => t.length === four.length && t.every((x) => /^4\d\d$/.test(x.trim())),
      'the 4xx view again',
    );
    expect(await page.getByLabel('Status').inputValue()).toBe('4xx');
    await page.getByLabel('Credential').selectOption('publishable_key');
    await page.getByRole('button', { name: 'Filter' }).click();
    await textsOf(statuses(), (t) => t.length === 1 && t[0]!.trim() === '400', 'the one 4xx of the publishable key');
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Credential').selectOption('');
    await page.getByLabel('Route contains').fill('webhooks');
    await page.getByRole('button', { name: 'Filter' }).click();
    await textsOf(
      main().getByRole('table', { name: 'Requests' }).locator('tbody .route'),
      (t) => t.length === 1 && t[0] === '/webhooks/:project_id/:slug',
      'only the webhook route',
    );
    await page.getByLabel('Route contains').fill('nothing-like-this');
    await page.getByRole('button', { name: 'Filter' }).click();
    await shown(main().getByText('No requests match'));
    expect(consoleErrors).toEqual([]);
  });
});

describe('branding and the hosted sign-in page', () => {
  const REDIRECT = 'https://app.example.com/callback';
  const HOSTILE = `Acme "</title><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`;
  // A 1x1 PNG, served for the logo's https address (the machine has no network; the route answers instead).
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );
  let clientId = '';
  let authorizeUrl = '';

  beforeAll(async () => {
    const clients = await call('GET', `/auth/api/v1/projects/${projectId}/oidc-clients`, { token });
    clientId = clients.body.oidc_clients[0].client_id;
    await call('PUT', `/auth/api/v1/projects/${projectId}/oidc-clients/${clientId}`, {
      token,
      body: { redirect_uris: [REDIRECT] },
    });
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 'st-9',
    });
    authorizeUrl = `${base}/authorize?${q}`;
  });

  it('sets the logo and colour in the console, refusing a colour that is not #rrggbb', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/settings`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Branding' }).click();
    await page.waitForURL(/\/p\/[^/]+\/branding$/);
    await shown(page.getByRole('heading', { name: 'Branding', level: 1 }));
    await page.getByLabel('Brand colour').fill('green');
    await shown(main().getByText('Write the colour as #rrggbb'));
    await page.getByLabel('Logo URL').fill('https://cdn.example.com/logo.png');
    await page.getByLabel('Brand colour').fill('#0b6e4f');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await shown(page.getByText('Branding saved'));
    const read = await call('GET', `/auth/api/v1/projects/${projectId}/branding`, { token });
    expect(read.body.branding).toMatchObject({ logo_url: 'https://cdn.example.com/logo.png', brand_color: '#0b6e4f' });
    await checkPage('polish-02-branding');
  });

  it("shows the project's name, logo and colour; a hostile name stays text, under the page's own strict CSP", async () => {
    expect((await call('PUT', `/auth/api/v1/projects/${projectId}`, { token, body: { name: HOSTILE } })).status).toBe(
      200,
    );
    // A context that keeps the page's CSP (the main one bypasses it for axe).
    const strict = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      await strict.route('https://cdn.example.com/**', (r) => r.fulfill({ contentType: 'image/png', body: PNG }));
      await strict.route('https://app.example.com/**', (r) => r.fulfill({ contentType: 'text/plain', body: 'ok' }));
      const hosted = await strict.newPage();
      const dialogs: string[] = [];
      hosted.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const res = await hosted.goto(authorizeUrl);
      const csp = res!.headers()['content-security-policy']!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain('img-src https://cdn.example.com;');
      expect(csp).not.toContain('script-src');
      await shown(hosted.getByRole('heading', { name: `Sign in to ${HOSTILE}` }));
      expect(await hosted.title()).toBe(`Sign in to ${HOSTILE}`);
      const state = await hosted.evaluate(() => ({
        pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
        scripts: document.scripts.length,
        images: [...document.images].map((i) => ({ src: i.src, alt: i.alt, loaded: i.naturalWidth > 0 })),
        button: getComputedStyle(document.querySelector('button.primary')!).backgroundColor,
      }));
      expect(state).toEqual({
        pwned: null,
        scripts: 0,
        images: [{ src: 'https://cdn.example.com/logo.png', alt: HOSTILE, loaded: true }],
        button: 'rgb(11, 110, 79)',
      });
      expect(dialogs).toEqual([]);

      // "Sign up": a new end-user, then back to the client with a code.
      await hosted.getByRole('link', { name: 'Sign up' }).click();
      await shown(hosted.getByRole('heading', { name: `Sign up to ${HOSTILE}` }));
      await hosted.getByLabel('E-mail').fill(`hosted-${Date.now()}@example.com`);
      await hosted.getByLabel('Password').fill('a brand new password 9');
      await hosted.getByRole('button', { name: 'Create account' }).click();
      await hosted.waitForURL((u) => u.href.startsWith(REDIRECT));
      await shown(hosted.getByText('ok'));
      const url = new URL(hosted.url());
      expect({ state: url.searchParams.get('state'), code: !!url.searchParams.get('code') }).toEqual({
        state: 'st-9',
        code: true,
      });

      // "Forgot password?": the page asks for the address and answers the same whoever it is.
      await hosted.goto(authorizeUrl);
      await hosted.getByRole('link', { name: 'Forgot password?' }).click();
      await shown(hosted.getByRole('heading', { name: 'Forgot your password?' }));
      await hosted.getByLabel('E-mail').fill('someone@example.com');
      await hosted.getByRole('button', { name: 'Send the link' }).click();
      await shown(hosted.getByRole('heading', { name: 'Check your e-mail' }));
      await shown(hosted.getByText('If an account exists for someone@example.com'));
      await hosted.getByRole('link', { name: 'Back to sign in' }).click();
      await shown(hosted.getByRole('heading', { name: `Sign in to ${HOSTILE}` }));
      expect(dialogs).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  it('the hosted pages pass axe', async () => {
    await context.route('https://cdn.example.com/**', (r) => r.fulfill({ contentType: 'image/png', body: PNG }));
    await call('PUT', `/auth/api/v1/projects/${projectId}`, { token, body: { name: 'Polish' } });
    await page.goto(authorizeUrl);
    await shown(page.getByRole('heading', { name: 'Sign in to Polish' }));
    await checkPage('polish-03-hosted-sign-in');
    await page.getByRole('link', { name: 'Sign up' }).click();
    await shown(page.getByRole('heading', { name: 'Sign up to Polish' }));
    await checkPage('polish-04-hosted-sign-up');
    await page.goto(authorizeUrl);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await shown(page.getByRole('heading', { name: 'Forgot your password?' }));
    await checkPage('polish-05-hosted-forgot-password');
  });
});

describe('defects of issue 26, each checked the way it showed', () => {
  let functionId = '';
  let userId = '';
  let executionId = '';

  beforeAll(async () => {
    // Content on every page, long where it can be (a long table name, file name, function name and route).
    const sql = await call('POST', '/v1/rawSQL', {
      apiKey,
      body: {
        sql: 'create table a_rather_long_table_name_for_narrow_screens (id serial primary key, title text, body text, created_at timestamptz default now())',
      },
    });
    expect(sql.status).toBe(200);
    await call('POST', '/v1/insert', {
      apiKey,
      body: {
        table: 'a_rather_long_table_name_for_narrow_screens',
        values: { title: 'A title', body: 'x'.repeat(300) },
      },
    });
    const formData = new FormData();
    formData.set('folder', 'invoices/2026');
    formData.set('confirm', 'true');
    formData.set('file', new Blob(['hello']), 'a-long-file-name-that-keeps-going-and-going.txt');
    const up = await fetch(`${platform.url}/storage/api/v1/storage/upload`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey },
      body: formData,
    });
    expect(up.status).toBe(201);
    const fn = await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'compute-a-long-function-name',
        slug: 'compute-a-long-function-name',
        steps: [{ name: 'answer', kind: 'Transform', expression: { ok: true, echo: '{{ input.body }}' } }],
      },
    });
    expect(fn.status).toBe(201);
    functionId = fn.body.function.id;
    const run = await call('POST', '/edge/api/v1/invoke/compute-a-long-function-name', { apiKey, body: { a: 1 } });
    executionId = run.headers.get('x-execution-id') ?? '';
    expect(executionId).not.toBe('');
    const user = await call('POST', '/register', {
      apiKey,
      body: { email: `a-rather-long-address-${Date.now()}@example.com`, password: 'a long enough password' },
    });
    userId = user.body.user.id;
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('the storage folder tree shows SVG icons, never an emoji (which renders as a box on Linux)', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/storage/files`);
    const tree = main().getByRole('list', { name: 'Folder tree' });
    await shown(tree.getByRole('button', { name: 'invoices' }));
    const buttons = await tree.getByRole('button').evaluateAll((els) =>
      els.map((el) => ({
        text: el.textContent ?? '',
        svg: el.querySelector('svg[aria-hidden="true"]') !== null,
      })),
    );
    expect(buttons.length).toBeGreaterThanOrEqual(3);
    for (const b of buttons)
      expect({ ...b, emoji: /\p{Extended_Pictographic}/u.test(b.text) }).toEqual({ ...b, emoji: false, svg: true });
    // No emoji anywhere in the page's text either.
    expect(/\p{Extended_Pictographic}/u.test(await main().innerText())).toBe(false);
    await checkPage('polish-06-storage-icons');
  });

  /**
   * In every one-row form of the page: the labels of the fields on its first line level, their controls level, and a
   * button on that line level with the controls (not with a hint below one of them).
   */
  const misaligned = async () =>
    await page.evaluate(() => {
      const out: string[] = [];
      for (const row of document.querySelectorAll('main .row')) {
        const fields = [...row.children].filter((c) => c.classList.contains('field'));
        if (fields.length === 0) continue;
        const box = (el: Element) => el.getBoundingClientRect();
        // Items on the first line: their boxes overlap the first field's vertically (a wrapped row starts a new line).
        const first = box(fields[0]!);
        const onLine = (el: Element) => box(el).top < first.bottom && box(el).bottom > first.top;
        const line = fields.filter(onLine);
        const labels = line.map((f) => Math.round(box(f.querySelector(':scope > label')!).top));
        const controls = line.map((f) => f.querySelector(':scope > input, :scope > select, :scope > textarea')!);
        const tops = controls.map((c) => Math.round(box(c).top));
        const controlBottom = Math.round(box(controls[0]!).bottom);
        const buttons = [...row.children].filter((c) => c.tagName === 'BUTTON' && onLine(c));
        const name = (fields[0]!.querySelector('label')?.textContent ?? '?').trim();
        const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
        if (spread(labels) > 1) out.push(`${name}: labels at ${labels.join(', ')}`);
        if (spread(tops) > 1) out.push(`${name}: controls at ${tops.join(', ')}`);
        for (const b of buttons) {
          const bottom = Math.round(box(b).bottom);
          if (Math.abs(bottom - controlBottom) > 2)
            out.push(`${name}: button bottom ${bottom}, control bottom ${controlBottom}`);
        }
      }
      return out;
    });

  it('labels, fields and buttons of a one-row form stay aligned when a field has a hint', async () => {
    await page.goto(`${base}/dashboard/p/${projectId}/storage/files`);
    await shown(main().getByLabel('New folder'));
    expect({ page: 'storage', problems: await misaligned() }).toEqual({ page: 'storage', problems: [] });
    await page.goto(`${base}/dashboard/p/${projectId}/requests`);
    await shown(main().getByLabel('Route contains'));
    await shot('polish-08-requests-form');
    expect({ page: 'requests', problems: await misaligned() }).toEqual({ page: 'requests', problems: [] });
  });

  // One row per console section: ~35 full page loads in one test outran its minute on a slow CI machine (each waits
  // for the network to settle), and a row names the section that scrolls.
  const sections: [string, () => string[]][] = [
    [
      'home, account and settings',
      () => [
        '/',
        '/account',
        ...['general', 'keys', 'oidc', 'cors', 'plan'].map((t) => `/p/${projectId}/settings/${t}`),
      ],
    ],
    [
      'auth and database',
      () => [
        `/p/${projectId}/auth`,
        `/p/${projectId}/auth/users/${userId}`,
        ...['tables', 'sql', 'policies', 'migrations', 'new'].map((t) => `/p/${projectId}/database/${t}`),
        `/p/${projectId}/database/tables/a_rather_long_table_name_for_narrow_screens`,
      ],
    ],
    [
      'storage, requests and branding',
      () => [
        ...['files', 'policies', 'usage'].map((t) => `/p/${projectId}/storage/${t}`),
        `/p/${projectId}/requests`,
        `/p/${projectId}/branding`,
      ],
    ],
    [
      'functions',
      () => [
        ...['list', 'new', 'executions', 'hooks', 'webhooks', 'cron', 'email', 'secrets', 'events', 'stats'].map(
          (t) => `/p/${projectId}/functions/${t}`,
        ),
        `/p/${projectId}/functions/f/${functionId}`,
        ...(executionId ? [`/p/${projectId}/functions/executions/${executionId}`] : []),
      ],
    ],
  ];
  it.each(sections)('no main page scrolls sideways at 390 px: %s', async (_section, pagesOf) => {
    const pages = pagesOf();
    await page.setViewportSize({ width: 390, height: 800 });
    const wide: { page: string; scrollWidth: number; innerWidth: number; widest: string }[] = [];
    try {
      for (const address of pages) {
        await page.goto(`${base}/dashboard${address}`);
        await page.waitForLoadState('networkidle');
        await count(page.locator('.loading'), 0);
        const m = await page.evaluate(() => {
          const root = document.scrollingElement!;
          // The outermost elements reaching past the right edge outside any scroller: what to fix.
          const clipped = (el: Element) => {
            for (let a = el.parentElement; a; a = a.parentElement)
              if (getComputedStyle(a).overflowX !== 'visible') return true;
            return false;
          };
          const past = [...document.querySelectorAll('body *')].filter(
            (el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !clipped(el),
          );
          const outer = past.filter((el) => !past.some((o) => o !== el && o.contains(el)));
          const widest = outer
            .slice(0, 3)
            .map(
              (el) =>
                `${el.tagName.toLowerCase()}${[...el.classList].map((c) => `.${c}`).join('')}(${(el.textContent ?? '').slice(0, 30)})`,
            )
            .join(' | ');
          return { scrollWidth: root.scrollWidth, innerWidth: window.innerWidth, widest };
        });
        if (m.scrollWidth > m.innerWidth) wide.push({ page: address, ...m });
        if (address.endsWith('/requests')) await shot('polish-07-requests-390');
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    expect(wide).toEqual([]);
  });

  it('the signed-out pages do not scroll sideways at 390 px either', async () => {
    const fresh = await browser.newContext({ viewport: { width: 390, height: 800 } });
    try {
      const p = await fresh.newPage();
      for (const address of ['/dashboard/', '/dashboard/sign-up', '/']) {
        await p.goto(`${base}${address}`);
        await p.waitForLoadState('networkidle');
        const m = await p.evaluate(() => ({
          scrollWidth: document.scrollingElement!.scrollWidth,
          innerWidth: window.innerWidth,
        }));
        expect({ address, wide: m.scrollWidth > m.innerWidth }).toEqual({ address, wide: false });
      }
    } finally {
      await fresh.close();
    }
  });
});
