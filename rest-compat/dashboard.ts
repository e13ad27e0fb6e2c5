// The dashboard at /dashboard (a single-page app built by dashboard/build.ts into dashboard/dist) and the landing
// page at / that links to it. The app calls only the public API, as any client would: serving it is all the front
// door does. Every address under /dashboard answers the app's page (the app routes in the browser); its assets have
// hashed names and are cached for good. Not built (a checkout started without `npm start`): 503 saying what to run.
import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DASHBOARD_DIST } from '../dashboard/build.ts';

/** The page's policy: its own scripts and styles only, calls to its own origin only, never framed. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // React and uPlot set style attributes from script.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  // E-mail previews render in a sandboxed srcdoc frame.
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function landingPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tessera</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:10vh auto;padding:0 1rem;line-height:1.5;color:#1b1f24}a{color:#1f5fbf}li{margin:.4rem 0}</style></head>
<body><main><h1>Tessera</h1><p>A self-hostable backend platform: accounts and projects, an OpenID Connect provider, a data API over PostgreSQL, file storage and edge functions behind this one address.</p>
<ul><li><a href="/dashboard">Open the dashboard</a> — sign up, create a project and find its keys</li><li><a href="/docs">REST API reference</a> (<a href="/openapi.json">OpenAPI document</a>)</li><li><a href="/graphql">GraphQL explorer</a></li><li><a href="/health">Health</a></li></ul></main></body></html>`;
}

function notBuilt(reply: FastifyReply) {
  return reply
    .code(503)
    .type('text/html; charset=utf-8')
    .header('retry-after', '30')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head><body><main><h1>The dashboard is not built</h1><p>Run <code>npm run dashboard:build</code> (or start Tessera with <code>npm start</code>, which builds it when needed), then reload.</p></main></body></html>`,
    );
}

/** Registers GET / and /dashboard (page and assets) on the front door. `dist` defaults to dashboard/dist. */
export async function registerDashboard(app: FastifyInstance, opts: { dist?: string } = {}): Promise<void> {
  const dist = opts.dist ?? DASHBOARD_DIST;
  const landing = landingPage();
  app.get('/', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .send(landing),
  );

  await app.register(fastifyStatic, {
    root: path.join(dist, 'assets'),
    prefix: '/dashboard/assets/',
    // Names carry a hash of the content: a new build has new names.
    immutable: true,
    maxAge: '365d',
    // The folder appears with the first build, possibly after start.
    allowedPath: () => fs.existsSync(path.join(dist, 'assets')),
    decorateReply: false,
    wildcard: true,
    // dashboard/build.ts writes .br and .gz beside each asset.
    preCompressed: true,
    index: false,
  });

  const page = async (_req: unknown, reply: FastifyReply) => {
    let html: string;
    try {
      // Read per request: a rebuild while running swaps the page and its asset names together.
      html = await fs.promises.readFile(path.join(dist, 'index.html'), 'utf8');
    } catch {
      return notBuilt(reply);
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(html);
  };
  app.get('/dashboard', page);
  app.get('/dashboard/*', async (req, reply) => {
    // Asset URLs that do not exist are 404s, not the page.
    if (req.url.startsWith('/dashboard/assets/')) return reply.callNotFound();
    return page(req, reply);
  });
}
