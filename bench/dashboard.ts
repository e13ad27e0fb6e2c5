// npm run bench:dashboard [-- --quick]: the dashboard's first load in headless chromium (Debian's, driven by
// playwright-core) on loopback against a one-process Tessera with its embedded PostgreSQL. A fresh browser context
// (empty cache) per run opens /dashboard and waits for the first screen: the sign-in form for a visitor, and the
// projects list with its projects for a signed-in tenant (session in localStorage, as after a sign-in). Figures per screen: bytes
// transferred (headers and bodies as sent, compressed), the gzipped size of the JavaScript the screen loaded,
// time to first contentful paint and time until the screen is usable (from navigation start);
// medians of 7 runs (--quick: 3). Also the gzipped size of every chunk of the app. Goals: JS <= 300 KB gzipped
// for the first screen, first screen <= 1 s.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Locator, Page } from 'playwright-core';
import { launchChromium } from '../tests/support/browser.ts';
import { BENCH_OUT as OUT, scratchDir } from './child.ts';
import { startTessera } from '../main.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = process.argv.includes('--quick') ? 3 : 7;
const GOAL_JS_GZIP = 300 * 1024;
const GOAL_FIRST_SCREEN_MS = 1000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gzipSize = (file: string) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

type Run = { transferred: number; jsGzip: number; requests: number; fcpMs: number; screenMs: number };

async function measure(page: Page, url: string, ready: (p: Page) => Locator, dist: string): Promise<Run> {
  let transferred = 0;
  let requests = 0;
  const js = new Set<string>();
  page.on('requestfinished', async (req) => {
    requests++;
    const sizes = await req.sizes();
    transferred += sizes.responseHeadersSize + sizes.responseBodySize;
    const u = new URL(req.url());
    if (u.pathname.endsWith('.js')) js.add(u.pathname);
  });
  await page.goto(url, { waitUntil: 'commit' });
  await ready(page).waitFor({ state: 'visible', timeout: 30_000 });
  const screenMs = await page.evaluate(() => performance.now());
  await page.waitForLoadState('networkidle');
  const fcpMs = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
  const jsGzip = [...js].reduce((n, p) => n + gzipSize(path.join(dist, p.replace(/^\/dashboard\//, ''))), 0);
  return { transferred, jsGzip, requests, fcpMs, screenMs };
}

async function main(): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'dashboard/build.ts')], { cwd: ROOT });
  const dist = path.join(ROOT, 'dashboard/dist');
  const dataDir = scratchDir('dashboard-data-');
  const tessera = await startTessera({
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'silent',
    TESSERA_DATA_DIR: dataDir,
    DATABASE_URL: undefined,
  });
  const browser = await launchChromium();
  try {
    const base = tessera.url;
    const email = `bench-${Date.now()}@example.com`;
    const password = 'a long enough password 1';
    const post = async (p: string, body: unknown, token?: string) => {
      const res = await fetch(`${base}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return await res.json();
    };
    await post('/auth/api/v1/tenants/signup', { email, password });
    const session = await post('/auth/api/v1/tenant/login', { email, password });
    await post('/auth/api/v1/projects', { name: 'Bench' }, session.access_token);

    const screens = [
      // A visitor: the sign-in form is usable.
      { name: 'sign-in (visitor)', ready: (p: Page) => p.getByRole('button', { name: 'Sign in' }), session: undefined },
      // A tenant: the list of projects has arrived (the project's link is there).
      {
        name: 'projects (signed in)',
        ready: (p: Page) => p.locator('main').getByRole('link', { name: 'Bench' }),
        session,
      },
    ];
    const results: Record<string, Run[]> = {};
    for (let i = 0; i < RUNS; i++) {
      for (const s of screens) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
        if (s.session)
          await context.addInitScript(
            (v) => window.localStorage.setItem('tessera.dashboard.session', v),
            JSON.stringify(s.session),
          );
        const page = await context.newPage();
        (results[s.name] ??= []).push(await measure(page, `${base}/dashboard`, s.ready, dist));
        await context.close();
      }
    }
    const chunks = fs.readdirSync(path.join(dist, 'assets')).filter((f) => f.endsWith('.js'));
    const allJs = chunks.reduce((n, f) => n + gzipSize(path.join(dist, 'assets', f)), 0);
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, runs]) => [
        name,
        {
          transferred_bytes: median(runs.map((r) => r.transferred)),
          js_gzip_bytes: median(runs.map((r) => r.jsGzip)),
          requests: median(runs.map((r) => r.requests)),
          fcp_ms: Math.round(median(runs.map((r) => r.fcpMs))),
          first_screen_ms: Math.round(median(runs.map((r) => r.screenMs))),
          first_screen_ms_max: Math.round(Math.max(...runs.map((r) => r.screenMs))),
        },
      ]),
    );
    console.log(
      `dashboard first load: ${RUNS} runs each, fresh context (empty cache), loopback; all chunks ${chunks.length} files, ${kb(allJs)} gzipped JS`,
    );
    console.log('| Screen | Transferred | JS (gzip) | Requests | FCP | First screen (median / max) | Goals met |');
    console.log('|---|---|---|---|---|---|---|');
    let met = true;
    for (const [name, s] of Object.entries(summary)) {
      const ok = s.js_gzip_bytes <= GOAL_JS_GZIP && s.first_screen_ms <= GOAL_FIRST_SCREEN_MS;
      met &&= ok;
      console.log(
        `| ${name} | ${kb(s.transferred_bytes)} | ${kb(s.js_gzip_bytes)} | ${s.requests} | ${s.fcp_ms} ms | ${s.first_screen_ms} / ${s.first_screen_ms_max} ms | ${ok ? 'yes' : 'no'} |`,
      );
    }
    fs.writeFileSync(
      path.join(OUT, `dashboard-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
      `${JSON.stringify({ runs: RUNS, all_chunks_js_gzip_bytes: allJs, screens: summary, raw: results }, null, 2)}\n`,
    );
    if (!met) process.exitCode = 1;
  } finally {
    await browser.close();
    await tessera.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
