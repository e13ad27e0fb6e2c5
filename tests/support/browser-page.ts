// Small waiting and checking helpers for the real-browser tests (playwright-core has no web-first assertions; these
// are their small equivalent), and the axe-core scan every dashboard page passes.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium, requireChromium } from './browser.ts';
import { client } from './http.ts';
import { startOneProcess, type TestPlatform } from './platform.ts';
import { waitFor } from './wait-for.ts';

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ROOT = new URL('../../', import.meta.url).pathname;
/** Where the browser tests save their screenshots (git-ignored). */
export const ARTIFACTS = path.join(ROOT, 'tests/artifacts/dashboard');

/** Polls `read` until `ok` holds. */
export async function until<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  let last: T | undefined;
  const seen = async () => {
    last = await read().catch(() => last); // not there yet
    return last !== undefined && ok(last) ? { value: last } : undefined;
  };
  const found = await waitFor(seen, { timeoutMs, intervalMs: 100, message: what }).catch((e: Error) => {
    throw new Error(`${e.message}; last seen: ${JSON.stringify(last)}`);
  });
  return found.value;
}

const matches = (v: string, m: string | RegExp) => (typeof m === 'string' ? v.includes(m) : m.test(v));

/** Waits until the locator is visible. */
export const shown = async (l: Locator) => void (await l.first().waitFor({ state: 'visible' }));

/** Waits until no element of the locator is visible. */
export const gone = async (l: Locator) =>
  void (await until(
    () => l.count().then(async (n) => n === 0 || !(await l.first().isVisible())),
    Boolean,
    `${l} to disappear`,
  ));

/** Waits until the (first) element's text is exactly `m` (or matches the expression). */
export const textIs = async (l: Locator, m: string | RegExp) =>
  void (await until(
    () => l.first().innerText(),
    (v) => (typeof m === 'string' ? v.trim() === m : m.test(v.trim())),
    `${l} to read ${m}`,
  ));

/** Waits until the (first) element's text contains `m`. */
export const contains = async (l: Locator, m: string | RegExp) =>
  void (await until(
    () => l.first().innerText(),
    (v) => matches(v, m),
    `${l} to contain ${m}`,
  ));

/** Waits until the locator has `n` elements. */
export const count = async (l: Locator, n: number) =>
  void (await until(
    () => l.count(),
    (c) => c === n,
    `${n} of ${l}`,
  ));

/** axe-core on the page: the serious and critical violations (WCAG 2 A and AA rules). */
export async function axe(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: unknown,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Collects the page's console errors and uncaught exceptions into `sink` (a test asserts it stays empty), but for the
 * console errors matching `ignore`.
 */
export function collectConsoleErrors(page: Page, sink: string[], ignore?: RegExp): void {
  page.on('console', (m) => {
    if (m.type() === 'error' && !ignore?.test(m.text())) sink.push(m.text());
  });
  page.on('pageerror', (e) => sink.push(`page error: ${e.message}`));
}

/** Fills the console's sign-up form (on the page) as `tenant` and sends it. */
export async function sendSignUp(page: Page, tenant: { name: string; email: string; password: string }): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(tenant.name);
  await page.getByLabel('E-mail').fill(tenant.email);
  await page.getByLabel('Password').fill(tenant.password);
  await page.getByRole('button', { name: 'Create account' }).click();
}

/**
 * What `signUpWithProject` does, through the API instead of the console (for tests of other pages): `tenant` signs up
 * and in and creates the project `projectName`; answers the tenant's id and access token, the project's id and keys.
 */
export async function tenantWithProject(
  apiUrl: string,
  tenant: { name?: string; email: string; password: string },
  projectName: string,
): Promise<{ tenantId: string; token: string; projectId: string; apiKey: string; publishableKey: string }> {
  const call = client(apiUrl);
  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: tenant });
  expect(signup.status).toBe(201);
  const token = (await call('POST', '/auth/api/v1/tenant/login', { body: tenant })).body.access_token as string;
  const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: projectName } });
  expect(created.status).toBe(201);
  const project = created.body.project as { id: string; api_key: string; publishable_key: string };
  return {
    tenantId: signup.body.tenant.id as string,
    token,
    projectId: project.id,
    apiKey: project.api_key,
    publishableKey: project.publishable_key,
  };
}

/**
 * A new tenant signs up in the console at `base` and creates a project named `projectName`, as a person does; answers
 * the project's id and its secret key (read through the API with the page's own session, for checks outside the
 * browser).
 */
export async function signUpWithProject(
  page: Page,
  base: string,
  apiUrl: string,
  tenant: { name: string; email: string; password: string },
  projectName: string,
): Promise<{ projectId: string; apiKey: string; publishableKey: string }> {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await sendSignUp(page, tenant);
  await shown(page.getByRole('heading', { name: 'Projects' }));
  await page.getByLabel('Project name').fill(projectName);
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.waitForURL(/\/dashboard\/p\/[^/]+\/settings/);
  const projectId = /\/p\/([^/]+)\//.exec(page.url())![1]!;
  const session = JSON.parse((await page.evaluate(() => localStorage.getItem('tessera.dashboard.session')))!) as {
    access_token: string;
  };
  const res = await fetch(`${apiUrl}/auth/api/v1/projects/${projectId}`, {
    headers: { authorization: `Bearer ${session.access_token}` },
  });
  const { project } = (await res.json()) as { project: { api_key: string; publishable_key: string } };
  return { projectId, apiKey: project.api_key, publishableKey: project.publishable_key };
}

/**
 * The console under test: the dashboard built (only when stale, as `npm start` does) while a one-process platform starts
 * with `env`, then chromium. `base` is the platform's address with `localhost` for a host name, as a person types it.
 */
export async function startConsole(
  env: Record<string, string> = {},
): Promise<{ platform: TestPlatform; base: string; browser: Browser }> {
  requireChromium();
  const build = promisify(execFile)(process.execPath, [path.join(ROOT, 'dashboard/build.ts')], { cwd: ROOT });
  const platform = await startOneProcess(env);
  try {
    await build;
    return { platform, base: platform.url.replace('127.0.0.1', 'localhost'), browser: await launchChromium() };
  } catch (err) {
    await platform.close();
    throw err;
  }
}

export type PageOptions = {
  /** Downloads are kept (a test reads what the page saved). */
  acceptDownloads?: boolean;
  /** The page may read and write the clipboard (copy buttons). */
  clipboard?: boolean;
  /** Console errors the test expects (a refused call shows in the console as a failed resource load). */
  ignoreConsole?: RegExp;
  /** Set-up of the context before its page opens (init scripts). */
  prepare?: (context: BrowserContext) => Promise<unknown>;
};

/**
 * A desktop-sized page of `browser` (CSP bypassed only so the test can inject axe-core: the page's own policy allows no
 * inline script), its console errors collected into `consoleErrors`.
 */
export async function openPage(
  browser: Browser,
  consoleErrors: string[],
  opts: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 860 },
    bypassCSP: true,
    acceptDownloads: opts.acceptDownloads ?? false,
  });
  if (opts.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await opts.prepare?.(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  collectConsoleErrors(page, consoleErrors, opts.ignoreConsole);
  return { context, page };
}

/** `startConsole(env)`, then `openPage`: the console under test and the page a person uses it through. */
export async function openConsole(
  env: Record<string, string>,
  consoleErrors: string[],
  opts: PageOptions = {},
): Promise<{ platform: TestPlatform; base: string; browser: Browser; context: BrowserContext; page: Page }> {
  const started = await startConsole(env);
  return { ...started, ...(await openPage(started.browser, consoleErrors, opts)) };
}

/**
 * The checks of a test file's page, read through `page` at each call (the page opens in the file's `beforeAll`): its
 * main landmark, a full-page screenshot in ARTIFACTS, and `checkPage`, which every view passes once it has settled
 * (network idle, no `.loading` left): its screenshot, and axe-core with no serious or critical violation.
 */
export function pageChecks(page: () => Page): {
  main: () => Locator;
  shot: (name: string) => Promise<void>;
  checkPage: (name: string) => Promise<void>;
} {
  const shot = async (name: string) => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page().screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  };
  return {
    main: () => page().locator('main'),
    shot,
    checkPage: async (name) => {
      await page().waitForLoadState('networkidle');
      await count(page().locator('.loading'), 0);
      await shot(name);
      expect({ page: name, violations: await axe(page()) }).toEqual({ page: name, violations: [] });
    },
  };
}

/**
 * A desktop-sized page of `browser` (`openPage`), its console errors collected into `consoleErrors`, signed in to the
 * console at `base` as `tenant`.
 */
export async function openSignedIn(
  browser: Browser,
  base: string,
  tenant: { email: string; password: string },
  consoleErrors: string[],
  opts: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page } = await openPage(browser, consoleErrors, opts);
  await page.goto(`${base}/dashboard/`);
  await page.getByLabel('E-mail').fill(tenant.email);
  await page.getByLabel('Password', { exact: true }).fill(tenant.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shown(page.getByRole('heading', { name: 'Projects' }));
  return { context, page };
}
