// Attacks on the dashboard (a web page holding a tenant's session and reading its projects' keys), as a table:
// whatever outsiders can put in a project (a public webhook's body, rows and file names an app's users write, an
// e-mail template's HTML) is shown as text and never runs in the dashboard's origin; another tenant's project id in
// the address shows an error and none of its keys; no other page can frame the dashboard. Each row checks, in a
// real browser (Debian's chromium, headless), that the planted markup did not run, and the neighbour is intact.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromium } from '../support/browser.ts';
import { startOneProcess, type TestPlatform } from '../support/platform.ts';
import { client } from '../support/http.ts';
import { STORAGE, upload } from '../e2e/storage/storage-fixtures.ts';
import { waitFor } from '../support/wait-for.ts';

jest.setTimeout(60_000);

const ROOT = new URL('../../', import.meta.url).pathname;
const MARKUP = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">';

type Tenant = { session: Record<string, unknown>; token: string; projectId: string; apiKey: string };

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let browser: Browser;
let page: Page;
let victim: Tenant;
let stranger: Tenant;
const dialogs: string[] = [];

async function newTenant(name: string): Promise<Tenant> {
  const email = `${name}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'a long enough password 1';
  expect((await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } })).status).toBe(201);
  const session = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } })).body;
  const project = (await call('POST', '/auth/api/v1/projects', { token: session.access_token, body: { name } })).body
    .project;
  return { session, token: session.access_token, projectId: project.id, apiKey: project.api_key };
}

/** Opens a dashboard address signed in as the victim; answers once `text` is on screen. */
async function visit(address: string, text: string): Promise<void> {
  await page.goto(`${platform.url}/dashboard${address}`);
  await page.getByText(text, { exact: false }).first().waitFor({ state: 'visible', timeout: 15_000 });
  // Give any planted handler (an image error, a script) the time to run.
  await page.waitForLoadState('networkidle');
}

const pwned = async () => await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned ?? 0);

type Row = { name: string; attack: () => Promise<void>; intact: () => Promise<void> };

const rows: Row[] = [
  {
    name: "a public webhook caller's markup is shown as text in the execution timeline, and does not run",
    attack: async () => {
      expect(
        (
          await call('POST', '/edge/api/v1/functions', {
            apiKey: victim.apiKey,
            body: {
              name: 'echo',
              steps: [{ name: 'keep', kind: 'Transform', expression: '{{ input.body }}', return: true }],
            },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await call('POST', '/edge/api/v1/webhooks', {
            apiKey: victim.apiKey,
            body: { function: 'echo', slug: 'inbox' },
          })
        ).status,
      ).toBe(201);
      expect((await call('POST', `/webhooks/${victim.projectId}/inbox`, { body: { note: MARKUP } })).status).toBe(200);
      let id = '';
      await waitFor(
        async () => {
          id =
            (await call('GET', '/edge/api/v1/executions?function=echo', { apiKey: victim.apiKey })).body.executions?.[0]
              ?.id ?? '';
          return id !== '';
        },
        { message: 'the execution' },
      );
      await visit(`/p/${victim.projectId}/functions/executions/${id}`, 'onerror=');
    },
    intact: async () => expect(await page.locator('main img[src="x"]').count()).toBe(0),
  },
  {
    name: 'markup stored in a row (as any app user could type it) is shown as text in the table browser',
    attack: async () => {
      for (const sql of [
        'create table notes (id serial primary key, body text)',
        `insert into notes (body) values ('${MARKUP.replace(/'/g, "''")}')`,
      ]) {
        expect((await call('POST', '/v1/rawSQL', { apiKey: victim.apiKey, body: { sql } })).status).toBe(200);
      }
      await visit(`/p/${victim.projectId}/database/tables/notes`, 'onerror=');
    },
    intact: async () => expect(await page.locator('main img[src="x"]').count()).toBe(0),
  },
  {
    name: 'a file uploaded under a name with markup is listed as text',
    attack: async () => {
      const res = await upload(
        platform.url,
        [
          { name: 'confirm', value: 'true' },
          {
            name: 'file',
            filename:
              '<img src=x onerror=window.__pwned=1>.txt' /* no double quotes: multipart quotes names with them */,
            contentType: 'text/plain',
            body: Buffer.from('x'),
          },
        ],
        { apiKey: victim.apiKey },
      );
      expect(res.status).toBe(201);
      await visit(`/p/${victim.projectId}/storage`, 'onerror=');
    },
    intact: async () =>
      expect((await call('GET', `${STORAGE}/objects`, { apiKey: victim.apiKey })).body.objects).toHaveLength(1),
  },
  {
    name: "an e-mail template's scripts do not run when it is previewed (sandboxed frame, no scripts)",
    attack: async () => {
      const html = `<p>Hi</p><script>parent.__pwned=(parent.__pwned||0)+1;alert(1)</script>${MARKUP.replace(/window/g, 'parent')}`;
      expect(
        (
          await call('POST', '/edge/api/v1/email-templates', {
            apiKey: victim.apiKey,
            body: { name: 'evil', subject: 'Hi', html, text: 'Hi' },
          })
        ).status,
      ).toBe(201);
      await visit(`/p/${victim.projectId}/functions/email`, 'evil');
      await page.getByRole('button', { name: 'evil' }).click();
      await page.getByRole('button', { name: 'Preview', exact: true }).click();
      await page.frameLocator('iframe.preview').getByText('Hi').waitFor({ state: 'visible' });
      await page.waitForTimeout(300);
    },
    intact: async () => expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe(''),
  },
  {
    name: "another tenant's project id in the address shows an error, never its keys",
    attack: async () => {
      await visit(`/p/${stranger.projectId}/settings/keys`, 'Could not open this project');
      const text = await page.locator('main').innerText();
      expect(text).not.toContain(stranger.apiKey);
      expect(text).toMatch(/NOT_FOUND|FORBIDDEN/);
    },
    intact: async () =>
      expect(
        (await call('GET', `/auth/api/v1/projects/${stranger.projectId}`, { token: stranger.token })).body.project
          .api_key,
      ).toBe(stranger.apiKey),
  },
  {
    name: 'a page of another origin cannot frame the dashboard (frame-ancestors none)',
    attack: async () => {
      const framed = await browser.newPage();
      try {
        await framed.setContent(`<iframe id="f" src="${platform.url}/dashboard" width="800" height="600"></iframe>`);
        await framed.waitForTimeout(1500);
        const frame = framed.frames().find((f) => f !== framed.mainFrame());
        const shown = frame ? await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '') : '';
        expect(shown).not.toContain('Sign in to Tessera');
      } finally {
        await framed.close();
      }
    },
    intact: async () => {
      const res = await fetch(`${platform.url}/dashboard`);
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    },
  },
];

beforeAll(async () => {
  requireChromium();
  const build = promisify(execFile)(process.execPath, [path.join(ROOT, 'dashboard/build.ts')], { cwd: ROOT });
  platform = await startOneProcess();
  call = client(platform.url);
  victim = await newTenant('victim');
  stranger = await newTenant('stranger');
  await waitFor(
    async () => (await call('POST', '/v1/rawSQL', { apiKey: victim.apiKey, body: { sql: 'select 1' } })).status === 200,
    { message: 'project database' },
  );
  await build;
  browser = await launchChromium();
  const context = await browser.newContext();
  await context.addInitScript(
    (s) => window.localStorage.setItem('tessera.dashboard.session', s),
    JSON.stringify(victim.session),
  );
  page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await platform?.close();
});

describe('attacks on the dashboard', () => {
  for (const row of rows) {
    it(row.name, async () => {
      await row.attack();
      expect({ pwned: await pwned(), dialogs }).toEqual({ pwned: 0, dialogs: [] });
      await row.intact();
    });
  }
});
