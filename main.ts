// Entry point. `node main.ts` (npm start) runs the whole platform in one process; split mode runs
// `node main.ts --role <subgraph:NAME|router|front-door>` per process (see scripts/split.ts).
// First: run as `node main.ts`, this re-executes node in place with the platform's V8/glibc settings.
import './platform/node-tuning.ts';
import { watchParent } from './platform/parent-watch.ts';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import { loadConfig, ConfigError, type Config } from './platform/config.ts';
import { createLogger, type Logger } from './platform/logger.ts';
import { startDatabase, takeSignalsFromEmbeddedPostgres, type RunningDatabase } from './platform/database.ts';
import { ensureInternalSecret } from './platform/secrets.ts';
import {
  lateBoundRouterClient,
  startSubgraph,
  type RouterClient,
  type RunningSubgraph,
  type SubgraphHandle,
} from './platform/subgraph.ts';
import { createSubgraphServer } from './platform/subgraph-server.ts';
import { remoteSubgraphHttp } from './platform/http-bridge.ts';
import { INTERNAL_CONTEXT_HEADER, verifyContext, type RequestContext } from './platform/auth.ts';
import { AppError, errors } from './platform/errors.ts';
import { sendGraphQLHttpError } from './rest-compat/render.ts';
import {
  clientErrorHandler,
  edgeServerOptions,
  frameworkErrorsOf,
  installEdge,
  underPath,
} from './platform/http-edge.ts';
import { graphqlLimitsOf } from './platform/graphql-limits.ts';
import { SUBGRAPHS } from './subgraphs/index.ts';
import { createRouter, createRouterClient, type Router } from './router/router.ts';
import { readSupergraphConfig, SUPERGRAPH_FILE } from './router/compose.ts';
import { remoteSubgraph } from './router/remote-subgraph.ts';
import { authenticate, credentialsOf } from './router/authenticate.ts';
import { serveGraphQL } from './router/http.ts';
import { createFrontDoor } from './rest-compat/server.ts';
import { countOperations, setMetricsRole } from './platform/metrics.ts';
import { noteProject, observeHttp } from './platform/http-observe.ts';

export type Tessera = { url: string; config: Config; app: FastifyInstance; router: Router; close: () => Promise<void> };

function supergraphSdl(): string {
  return fs.readFileSync(SUPERGRAPH_FILE, 'utf8');
}

/** Routing URLs of the subgraphs: supergraph.yaml, overridden by TESSERA_SUBGRAPH_URLS. */
export function routingUrls(config: Config): Map<string, string> {
  const urls = new Map(readSupergraphConfig().map((e) => [e.name, e.routingUrl]));
  for (const pair of config.subgraphUrls.split(',').filter(Boolean)) {
    const [name, url] = pair.split('=');
    if (name && url) urls.set(name.trim(), url.trim());
  }
  return urls;
}

async function listen(app: FastifyInstance, port: number, host: string): Promise<string> {
  await app.listen({ port, host });
  const addr = app.server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
}

/** Starts everything in one process: database, five subgraphs, router and front door. */
export async function startTessera(
  env: Record<string, string | undefined> = process.env,
  logger?: Logger,
): Promise<Tessera> {
  const config = loadConfig(env);
  const log = logger ?? createLogger(config.logLevel);
  ensureInternalSecret(config);
  // An embedded server accepts every connection the data API may open (its shared budget), plus the platform's own.
  const maxConnections = Math.max(300, config.dataMaxConnections + 100);
  const db: RunningDatabase = await startDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDirAbs,
    port: config.embeddedPgPort,
    maxConnections,
    logger: log,
  });
  const running: RunningSubgraph[] = [];
  const routerClient = lateBoundRouterClient();
  let started: Router | undefined;
  try {
    for (const def of Object.values(SUBGRAPHS))
      running.push(
        countOperations(await startSubgraph(def, { config, databaseUrl: db.url, logger: log, router: routerClient })),
      );
    const router = (started = await createRouter({
      supergraphSdl: supergraphSdl(),
      handles: running,
      logger: log,
      broadcastUrl: db.url,
      limits: graphqlLimitsOf(config),
    }));
    routerClient.bind(router);
    const mounts = running.flatMap((r) => (r.http ? [r.http] : []));
    const app = await createFrontDoor({ config, logger: log, router, mounts, broadcastUrl: db.url });
    const url = await listen(app, config.port, config.host);
    if (!config.publicUrl) config.issuer = `http://localhost:${new URL(url).port}`;
    log.info({ url, database: db.embedded ? 'embedded' : 'external' }, 'Tessera is listening');
    return {
      url,
      config,
      app,
      router,
      close: async () => {
        await app.close();
        await router.stop();
        for (const s of running) await s.close();
        await db.stop();
      },
    };
  } catch (err) {
    await started?.stop().catch(() => {});
    for (const s of running) await s.close().catch(() => {});
    await db.stop().catch(() => {});
    throw err;
  }
}

/** Split mode, one subgraph: serves it at the port of its routing URL. */
async function runSubgraph(name: string, config: Config, log: Logger): Promise<() => Promise<void>> {
  const def = SUBGRAPHS[name];
  if (!def) throw new Error(`unknown subgraph "${name}" (known: ${Object.keys(SUBGRAPHS).join(', ')})`);
  if (!config.databaseUrl)
    throw new ConfigError(['DATABASE_URL: required for a subgraph process in split mode (scripts/split.ts passes it)']);
  const secret = ensureInternalSecret(config);
  // Calls to other domains: straight to the subgraph that answers alone, else through the router process
  // (router/router.ts createRouterClient), or a gateway of its own without TESSERA_ROUTER_URL. Built now, before the
  // subgraph's jobs start and it listens: built on first use, it held the event loop in the middle of a job.
  const remote = remoteRouterOf(config, secret);
  const handles = remoteHandles(config, secret);
  const gateway = remote
    ? undefined
    : await createRouter({ supergraphSdl: supergraphSdl(), handles, logger: log, limits: graphqlLimitsOf(config) });
  const router: RouterClient =
    gateway ?? createRouterClient({ supergraphSdl: supergraphSdl(), handles, remote: remote! });
  const sub = countOperations(
    await startSubgraph(def, { config, databaseUrl: config.databaseUrl, logger: log, router }),
  );
  const app = createSubgraphServer(sub, secret, log, config, {
    maxFileSize: config.storageMaxUploadBytes,
    observe: config,
  });
  // Bound where TESSERA_SUBGRAPH_HOST/PORT say (a container's 0.0.0.0), else where its routing URL points.
  const url = new URL(routingUrls(config).get(name)!);
  const bound = await listen(
    app,
    config.subgraphPort ?? Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    config.subgraphHost || url.hostname,
  );
  log.info({ subgraph: name, url: url.toString(), listening: bound }, 'subgraph listening');
  return async () => {
    await app.close();
    await sub.close();
    await gateway?.stop();
  };
}

function remoteRouterOf(config: Config, secret: string): { url: string; secret: string } | undefined {
  return config.routerUrl ? { url: config.routerUrl, secret } : undefined;
}

function remoteHandles(config: Config, secret: string): SubgraphHandle[] {
  return [...routingUrls(config)].map(([name, url]) => remoteSubgraph(name, url, secret));
}

/** Split mode, the router: /graphql over HTTP subgraphs. Accepts the front door's signed context or raw credentials. */
async function runRouter(config: Config, log: Logger): Promise<() => Promise<void>> {
  const secret = ensureInternalSecret(config);
  const router = await createRouter({
    supergraphSdl: supergraphSdl(),
    handles: remoteHandles(config, secret),
    logger: log,
    broadcastUrl: config.databaseUrl,
    limits: graphqlLimitsOf(config),
  });
  // Every answer of this process is a GraphQL response, errors before execution included.
  const render = (reply: FastifyReply, err: unknown) => sendGraphQLHttpError(reply, err, log);
  const app = Fastify({
    ...edgeServerOptions(config),
    frameworkErrors: frameworkErrorsOf(render),
    clientErrorHandler,
    loggerInstance: log.child({ component: 'router' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
  });
  // The front door forwards callers' JSON (bounded there) wrapped a level deeper: the nesting limit leaves room.
  installEdge(
    app,
    { ...config, jsonMaxDepth: config.jsonMaxDepth + 8 },
    { render, exempt: (url) => underPath(url, '/readyz') || underPath(url, '/livez') },
  );
  app.setErrorHandler((err, _req, reply) => render(reply, err));
  app.setNotFoundHandler((req, reply) =>
    render(reply, new AppError('ROUTE_NOT_FOUND', `No route for ${req.method} ${req.url.split('?')[0]}`)),
  );
  app.route({
    method: ['GET', 'POST'],
    url: '/graphql',
    handler: async (req, reply) => {
      const signed = req.headers[INTERNAL_CONTEXT_HEADER];
      let ctx: RequestContext;
      if (typeof signed === 'string') {
        ctx = await verifyContext(signed, secret).catch((err: Error) => {
          throw errors.unauthenticated(`invalid router context: ${err.message}`);
        });
      } else
        ctx = {
          requestId: String(req.id),
          principal: await authenticate(credentialsOf(req.headers), router.handles, String(req.id), router.credentials),
          ip: req.ip,
        };
      noteProject(req, ctx.principal);
      return serveGraphQL(router, req, reply, ctx, undefined, { jsonMaxDepth: config.jsonMaxDepth });
    },
  });
  app.get('/readyz', async () => ({ status: 'ok' }));
  app.get('/livez', async () => ({ status: 'ok' }));
  observeHttp(app, { config, logger: log });
  const bound = await listen(app, config.routerPort, config.routerHost);
  log.info({ url: bound }, 'router listening');
  return async () => {
    await app.close();
    await router.stop();
  };
}

/** Split mode, the front door: public address; fast path straight to subgraphs, the rest via the router process. */
async function runFrontDoor(config: Config, log: Logger): Promise<() => Promise<void>> {
  const secret = ensureInternalSecret(config);
  const router = await createRouter({
    supergraphSdl: supergraphSdl(),
    handles: remoteHandles(config, secret),
    logger: log,
    remote: remoteRouterOf(config, secret),
    broadcastUrl: config.databaseUrl,
    limits: graphqlLimitsOf(config),
  });
  // Subgraph HTTP endpoints (e.g. /realtime) are forwarded to the subgraph's own server.
  const urls = routingUrls(config);
  const mounts = Object.entries(SUBGRAPHS).flatMap(([name, def]) =>
    def.http && urls.get(name) ? [{ prefix: def.http.prefix, ...remoteSubgraphHttp(urls.get(name)!, secret) }] : [],
  );
  const app = await createFrontDoor({ config, logger: log, router, mounts, broadcastUrl: config.databaseUrl });
  const url = await listen(app, config.port, config.host);
  log.info({ url }, 'front door listening');
  return async () => {
    await app.close();
    await router.stop();
  };
}

async function cli(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const roleIdx = process.argv.indexOf('--role');
  const role = roleIdx > 0 ? process.argv[roleIdx + 1] : 'all';
  setMetricsRole(role ?? 'all');
  // Processes of one deployment may sit on different hosts: a secret generated into one host's data folder
  // would not be the others' (every signed context refused), so a split-mode process is given it.
  if (role !== 'all' && !config.internalSecret) {
    console.error(
      'Invalid configuration:\n  - TESSERA_INTERNAL_SECRET: required for a split-mode process (--role); every process of a deployment must share it',
    );
    process.exit(2);
  }
  let stop: () => Promise<void>;
  if (role === 'all') stop = (await startTessera(process.env, log)).close;
  else if (role?.startsWith('subgraph:')) stop = await runSubgraph(role.slice(9), config, log);
  else if (role === 'router') stop = await runRouter(config, log);
  else if (role === 'front-door') stop = await runFrontDoor(config, log);
  else throw new Error(`unknown role "${role}": use all, subgraph:<name>, router or front-door`);
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    // A stop that hangs (its database already gone) must not leave the process behind.
    setTimeout(() => process.exit(1), 20_000).unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  takeSignalsFromEmbeddedPostgres();
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGHUP', () => shutdown('SIGHUP'));
  // Started by a supervisor (split launcher, tests): end with it, even when it was killed outright.
  watchParent(() => shutdown('supervisor gone'));
}

if (import.meta.main) {
  cli().catch((err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  });
}
