// A real browser (Debian's chromium, headless, driven by playwright-core; no browser download): a page served from
// another origin than Tessera loads the built client package, signs an end-user up with the publishable key, signs
// in with the code flow and PKCE through the hosted page, inserts and reads rows under row level security, uploads
// a file with progress and receives a realtime event; the same page's admin calls get 403, a page on an origin the
// project did not allow cannot read answers at all, and GET /graphql renders GraphiQL with nothing from outside.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromium } from '../../support/browser.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { newProjectWithPk, type Project } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

let platform: TestPlatform;
let api: string;
let project: Project & { pk: string };
let dist: string;
let pageServer: http.Server;
let pageOrigin: string;
let otherServer: http.Server;
let otherOrigin: string;
let browser: Browser;
let page: Page;
const outside: string[] = [];

/** Serves the app page, the built client package and its two runtime dependencies (an import map names them). */
function servePages(): http.Server {
  const files: Record<string, string> = {
    'eventsource-parser': path.join(ROOT, 'node_modules/eventsource-parser/dist'),
    'graphql-ws': path.join(ROOT, 'node_modules/graphql-ws/dist'),
  };
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>app</title>
<script type="importmap">{"imports": {"eventsource-parser": "/deps/eventsource-parser/index.js", "graphql-ws/client": "/deps/graphql-ws/client.js"}}</script>
<script type="module">import * as tessera from '/client/index.js'; window.tessera = tessera; window.ready = true;</script>
</head><body>app</body></html>`;
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let file: string | undefined;
    if (url.pathname.startsWith('/client/')) file = path.join(dist, url.pathname.slice('/client/'.length));
    const dep = /^\/deps\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (dep && files[dep[1]!]) file = path.join(files[dep[1]!]!, dep[2]!);
    if (file) {
      if (!file.startsWith(dist) && !Object.values(files).some((f) => file!.startsWith(f)))
        return res.writeHead(403).end();
      if (!fs.existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(fs.readFileSync(file));
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
}

/** Listens on `host`; the origin pages are opened at names `originHost`. */
async function listen(server: http.Server, host: string, originHost: string): Promise<string> {
  await new Promise<void>((r) => server.listen(0, host, r));
  return `http://${originHost}:${(server.address() as AddressInfo).port}`;
}

async function openApp(origin: string): Promise<Page> {
  const p = await browser.newPage();
  await p.goto(`${origin}/`);
  await p.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return p;
}

beforeAll(async () => {
  requireChromium();
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-client-dist-'));
  // The package as it ships: compiled by its own build configuration.
  const build = promisify(execFile)(process.execPath, [
    path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '-p',
    path.join(ROOT, 'packages/client/tsconfig.build.json'),
    '--outDir',
    dist,
  ]);
  platform = await startOneProcess();
  api = platform.url.replace('localhost', '127.0.0.1');
  const p = (project = await newProjectWithPk(api));
  const call = client(api);
  pageServer = servePages();
  pageOrigin = await listen(pageServer, 'localhost', 'localhost');
  otherServer = servePages();
  otherOrigin = await listen(otherServer, '127.0.0.2', '127.0.0.2');
  // The app: its page's origin may call the project; its public client returns to the page.
  expect(
    (
      await call('PUT', `/auth/api/v1/projects/${p.id}/cors`, {
        token: p.tenantToken,
        body: { allowed_origins: [pageOrigin] },
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await call('PUT', `/auth/api/v1/projects/${p.id}/oidc-clients/${p.clientId}`, {
        token: p.tenantToken,
        body: { public: true, redirect_uris: [`${pageOrigin}/callback`] },
      })
    ).status,
  ).toBe(200);
  const sql = async (text: string) =>
    expect((await call('POST', '/v1/rawSQL', { apiKey: p.apiKey, body: { sql: text } })).status).toBe(200);
  await waitFor(
    async () => (await call('POST', '/v1/rawSQL', { apiKey: p.apiKey, body: { sql: 'select 1' } })).status === 200,
    { message: 'project database' },
  );
  await sql(
    "create table notes (id serial primary key, body text not null, owner text not null default current_setting('request.user_id', true))",
  );
  await sql('alter table notes enable row level security');
  await sql(
    "create policy own_notes on notes using (owner = current_setting('request.user_id', true)) with check (owner = current_setting('request.user_id', true))",
  );
  expect(
    (
      await call('POST', `/auth/api/v1/projects/${p.id}/publications`, {
        token: p.tenantToken,
        body: { table: 'notes', enabled: true },
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await call('POST', '/storage/api/v1/storage/policies', {
        apiKey: p.apiKey,
        body: { name: 'own', folder: 'uploads', operations: ['read', 'write', 'list'], principal: 'owner' },
      })
    ).status,
  ).toBe(201);
  await build;
  browser = await launchChromium();
  page = await openApp(pageOrigin);
  // Nothing but the two local origins is ever asked for.
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (!['localhost', '127.0.0.1', '127.0.0.2'].includes(u.hostname) && u.protocol.startsWith('http'))
      outside.push(r.url());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => pageServer?.close(r));
  await new Promise((r) => otherServer?.close(r));
  await platform?.close();
  if (dist) fs.rmSync(dist, { recursive: true, force: true });
});

type Win = { tessera: typeof import('../../../packages/client/src/index.ts') };

describe('a web page on another origin', () => {
  const user = { email: `browser-${Date.now()}@example.com`, password: 'a long enough password' };

  it('signs an end-user up with the publishable key', async () => {
    const created = await page.evaluate(
      async ({ api, pk, user }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk });
        return await t.auth.signUp(user);
      },
      { api, pk: project.pk, user },
    );
    expect(created).toMatchObject({ email: user.email, project_id: project.id });
  });

  it('signs in with the code flow and PKCE through the hosted page, back on the page with a session', async () => {
    await page.evaluate(
      async ({ api, pk, clientId, redirectUri }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk, clientId, store: localStorage });
        await t.auth.signInWithRedirect({ redirectUri });
      },
      { api, pk: project.pk, clientId: project.clientId, redirectUri: `${pageOrigin}/callback` },
    );
    await page.waitForURL(`${api}/authorize**`);
    await page.fill('#email', user.email);
    await page.fill('#password', user.password);
    await page.click('button[value=sign_in]');
    await page.waitForURL(`${pageOrigin}/callback**`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const who = await page.evaluate(
      async ({ api, pk, clientId }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk, clientId, store: localStorage });
        const session = await t.auth.handleRedirect();
        return { hasRefresh: Boolean(session?.refreshToken), user: await t.auth.getUser() };
      },
      { api, pk: project.pk, clientId: project.clientId },
    );
    expect(who.hasRefresh).toBe(true);
    expect(who.user).toMatchObject({ email: user.email });
  });

  it('inserts and reads rows under row level security, uploads a file with progress, and receives a realtime event', async () => {
    const result = await page.evaluate(
      async ({ api, pk, clientId }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk, clientId, store: localStorage });
        const events: unknown[] = [];
        const sub = t.realtime.subscribe((c) => events.push(c), { table: 'notes' });
        await sub.ready;
        await t.from('notes').insert({ body: 'from the browser' }, { returning: false });
        const rows = await t.from('notes').select('body').order('id');
        const progress: number[] = [];
        const file = new File([new Uint8Array(256 * 1024).fill(42)], 'pic.bin', { type: 'application/octet-stream' });
        const obj = await t.storage.upload(file, {
          folder: 'uploads',
          confirm: true,
          onProgress: (sent) => progress.push(sent),
        });
        const bytes = await t.storage.downloadBytes(obj.id);
        const deadline = Date.now() + 10_000;
        while (events.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        sub.close();
        return { rows, size: obj.size, downloaded: bytes.length, lastProgress: progress.at(-1), events };
      },
      { api, pk: project.pk, clientId: project.clientId },
    );
    expect(result.rows).toEqual([{ body: 'from the browser' }]);
    expect(result.size).toBe(256 * 1024);
    expect(result.downloaded).toBe(256 * 1024);
    expect(result.lastProgress).toBeGreaterThanOrEqual(256 * 1024);
    expect(result.events[0]).toMatchObject({ table: 'notes', operation: 'insert', row: { body: 'from the browser' } });
  });

  it("gets 403 for the secret key's admin calls", async () => {
    const refused = await page.evaluate(
      async ({ api, pk }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk });
        const codeOf = async (p: Promise<unknown>) =>
          await p.then(
            () => 'ok',
            (e: { status: number; code: string; details?: { key_kind?: string } }) =>
              `${e.status} ${e.code} ${e.details?.key_kind ?? ''}`.trim(),
          );
        return [
          await codeOf(t.data.sql('select 1')),
          await codeOf(t.functions.list()),
          await codeOf(t.storage.policies.list()),
          await codeOf(t.functions.secrets.set('X', 'y')),
          await codeOf(t.data.find({ table: 'notes' })),
        ];
      },
      { api, pk: project.pk },
    );
    expect(refused.slice(0, 4)).toEqual(Array(4).fill('403 FORBIDDEN publishable'));
    // The table itself is open to the key, under its policies (no row belongs to an anonymous visitor).
    expect(refused[4]).toBe('ok');
  });

  it('from an origin the project did not allow cannot read an answer', async () => {
    const other = await openApp(otherOrigin);
    const outcome = await other.evaluate(
      async ({ api, pk }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk });
        return await t.data.find({ table: 'notes' }).then(
          () => 'read',
          (e: { code: string }) => e.code,
        );
      },
      { api, pk: project.pk },
    );
    expect(outcome).toBe('NETWORK_ERROR');
    // Nor subscribe over a WebSocket, which browsers open without CORS (Tessera checks the Origin itself).
    const socket = await other.evaluate(
      async ({ api, pk }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk });
        const sub = t.realtime.subscribe(() => {}, { table: 'notes', transport: 'ws' });
        return await sub.ready.then(
          () => 'subscribed',
          (e: { code: string; message: string }) => `${e.code} ${e.message}`,
        );
      },
      { api, pk: project.pk },
    );
    expect(socket).toBe('REALTIME_CLOSED The realtime socket closed: Forbidden');
    await other.close();
  });

  it('on an origin the project allows subscribes over a WebSocket too', async () => {
    const got = await page.evaluate(
      async ({ api, pk }) => {
        const t = (window as unknown as Win).tessera.createClient({ url: api, key: pk });
        const sub = t.realtime.subscribe(() => {}, { table: 'notes', transport: 'ws' });
        const outcome = await sub.ready.then(
          () => 'subscribed',
          (e: { code: string }) => e.code,
        );
        sub.close();
        return outcome;
      },
      { api, pk: project.pk },
    );
    expect(got).toBe('subscribed');
  });

  it('GET /graphql renders the GraphiQL explorer from Tessera alone', async () => {
    const explorer = await browser.newPage();
    const asked: string[] = [];
    explorer.on('request', (r) => asked.push(r.url()));
    await explorer.goto(`${api}/graphql`);
    await explorer.waitForSelector('.graphiql-container', { timeout: 30_000 });
    await explorer.waitForFunction(
      () => document.body.innerText.includes('Tessera') || document.title.includes('Tessera'),
    );
    expect(asked.filter((u) => u.startsWith('http') && !u.startsWith(api))).toEqual([]);
    await explorer.close();
    expect(outside).toEqual([]);
  }, 60_000);
});
