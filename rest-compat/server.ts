// The front door: owns the public HTTP address. REST rows run their GraphQL operation straight on the
// subgraph that serves it (fast path) or through the router; /graphql is the full router.
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { Principal, RequestContext } from '../platform/auth.ts';
import { AppError, errors } from '../platform/errors.ts';
import { operatorOutsideAdmin, publishableRefusal } from '../platform/admin-scopes.ts';
import { createFailureLimiter } from '../platform/rate-limit.ts';
import { isUuid } from '../platform/ids.ts';
import type { Router } from '../router/router.ts';
import { OPERATOR_KEY_PREFIX, authenticate, credentialsOf, peekPrincipal } from '../router/authenticate.ts';
import { startRequestQuota } from '../router/request-quota.ts';
import { createPlanLimitsReader } from '../platform/plan-limits.ts';
import { isMultipartRequest, readMultipartRequest, serveGraphQL } from '../router/http.ts';
import type { FastPath } from '../router/planner.ts';
import { ROUTE_TABLE } from './route-table.ts';
import type { RouteRow } from './route-types.ts';
import { DATA_ACTIONS } from '../platform/data-actions.ts';
import { isInputObjectType } from 'graphql';
import { restVariableError, variablesFor, variableTypesOf } from './variables.ts';
import { renderError, sendError, sendGraphQLErrors } from './render.ts';
import {
  clientErrorHandler,
  edgeServerOptions,
  frameworkErrorsOf,
  installEdge,
  underPath,
} from '../platform/http-edge.ts';
import { checkJsonValue } from '../platform/input-guard.ts';
import { HEALTH_OPENAPI, registerHealthRoutes } from './health.ts';
import { assembleOpenApi } from './openapi.ts';
import { renderDocsPage } from './docs-page.ts';
import { RAW_HANDLERS, type RawHandlerModule } from './handlers/index.ts';
import { mountSubgraphHttp, type HttpMount } from './mounts.ts';
import { lazyRequestLogger } from './request-logger.ts';
import { notePrincipal, startRequestLog } from './request-log.ts';
import { noteProject, observeHttp } from '../platform/http-observe.ts';
import { loadPressure } from '../platform/load-pressure.ts';
import { createRequestLane } from '../platform/request-lane.ts';
import { installCors } from './cors.ts';
import { sendGraphiQL, wantsGraphiQL } from './graphiql.ts';
import { registerDashboard } from './dashboard.ts';

/** The data API's actions (`POST /v1/<action>`), named when a path under /v1 is none of them. */
const DATA_ACTION_NAMES = Object.keys(DATA_ACTIONS);

export type FrontDoorOptions = {
  config: Config;
  logger: Logger;
  router: Router;
  routes?: readonly RouteRow[];
  rawHandlers?: readonly RawHandlerModule[];
  /** HTTP endpoints subgraphs serve beside GraphQL (e.g. /realtime), mounted at their prefix. */
  mounts?: readonly HttpMount[];
  /** The platform database, whose broadcasts say when a project's CORS rule changed; without it rules are reloaded every 5 s. */
  broadcastUrl?: string;
};

type PreparedRoute = { row: RouteRow; fast: FastPath | null; types: Map<string, string> };

/** Wrong operator keys allowed per client address in 15 minutes (guessing a 256-bit key is hopeless; the log is not). */
export const OPERATOR_KEY_FAILURES_PER_ADDRESS = 20;
/** Where an operator key may be used: the admin API, and /graphql (whose executors allow it the admin fields only). */
const OPERATOR_PATH = /^\/(?:admin\/api\/v1(?:\/|$|\?)|graphql(?:$|\?))/;

/** Checks every row's operation against the supergraph and plans it; throws listing every bad row. */
export function prepareRoutes(router: Router, routes: readonly RouteRow[]): PreparedRoute[] {
  const problems: string[] = [];
  const prepared: PreparedRoute[] = [];
  for (const row of routes) {
    const errs = router.validateOperation(row.operation);
    if (errs.length > 0) {
      problems.push(`${row.method} ${row.path} (${row.id}): ${errs.join('; ')}`);
      continue;
    }
    prepared.push({ row, fast: router.planner.fastPathOf(row.operation), types: variableTypesOf(row) });
  }
  if (problems.length > 0)
    throw new Error(
      `Route table operations do not match the supergraph:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  return prepared;
}

function allowed(row: RouteRow, p: Principal): boolean {
  switch (row.auth) {
    case 'none':
    case 'optional':
      return true;
    case 'tenant':
      return p.kind === 'tenant';
    case 'project':
      // The publishable key passes here; what it may run is checked by the executor (platform/admin-scopes.ts).
      return p.kind === 'project' || p.kind === 'user' || p.kind === 'publishable';
    case 'user':
      return p.kind === 'user';
    case 'any':
      return p.kind !== 'anonymous' && p.kind !== 'operator';
    case 'operator':
      return p.kind === 'operator';
  }
}

const AUTH_HINT: Record<RouteRow['auth'], string> = {
  none: '',
  optional: '',
  tenant: 'a tenant access token is required (Authorization: Bearer <access_token> from /auth/api/v1/tenant/login)',
  project: 'a project API key (X-Api-Key) or an end-user access token is required',
  user: 'an end-user access token is required (Authorization: Bearer <access_token> from /token)',
  any: 'credentials are required (X-Api-Key or Authorization: Bearer)',
  operator: 'an operator key is required (Authorization: Bearer top_...); the admin API refuses every other credential',
};

/** Answers a row with `response: 'http'`: its root field is `{status, body, headers?}` chosen by the domain. */
function sendHttpResult(reply: FastifyReply, data: Record<string, unknown>): FastifyReply {
  const out = (data[Object.keys(data)[0]!] ?? {}) as { status?: unknown; body?: unknown; headers?: unknown };
  const status =
    typeof out.status === 'number' && Number.isInteger(out.status) && out.status >= 200 && out.status <= 599
      ? out.status
      : 200;
  if (out.headers && typeof out.headers === 'object') {
    for (const [k, v] of Object.entries(out.headers))
      if (typeof v === 'string' && /^x-[a-z0-9-]+$/i.test(k)) void reply.header(k, v);
  }
  if (status === 204 || status === 304) return reply.code(status).send();
  return reply
    .code(status)
    .type('application/json')
    .send(JSON.stringify(out.body ?? null));
}

/** Builds the Fastify app of the public address (not yet listening). */
export async function createFrontDoor(opts: FrontDoorOptions): Promise<FastifyInstance> {
  const { config, logger, router } = opts;
  const prepared = prepareRoutes(router, opts.routes ?? ROUTE_TABLE);
  const render = (reply: FastifyReply, err: unknown) => renderError(reply, err, reply.request.log);
  const app = Fastify({
    ...edgeServerOptions(config),
    frameworkErrors: frameworkErrorsOf(render),
    clientErrorHandler,
    loggerInstance: logger.child({ component: 'front-door' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, opts) => lazyRequestLogger(logger, bindings, opts),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    // The data API's one public path is /v1/* (the route table's rows); /api/v1/*, the data service's own older
    // spelling, stays an undocumented alias of it.
    rewriteUrl: (req) =>
      req.url?.startsWith('/api/v1/') || req.url === '/api/v1' ? req.url.slice(4) : (req.url ?? '/'),
    routerOptions: { ...edgeServerOptions(config).routerOptions, ignoreTrailingSlash: true },
  });

  // Metrics and the access log of every request; GET /metrics.
  observeHttp(app, { config, logger });
  // The per-project request log (rest-compat/request-log.ts): rows kept in memory, written to the platform database in batches.
  const requestLog = startRequestLog(app, { url: opts.broadcastUrl, keep: config.requestLogRows, logger });
  app.addHook('onClose', async () => await requestLog.stop());
  // Timeouts, load shedding, JSON limits and the text check for every route (platform/http-edge.ts); streams of
  // subgraph endpoints (realtime) and health checks are never shed.
  const mountPrefixes = (opts.mounts ?? []).map((m) => m.prefix);
  installEdge(app, config, {
    render,
    exempt: (url) =>
      underPath(url, '/health') || underPath(url, '/livez') || mountPrefixes.some((p) => underPath(url, p)),
  });
  // Browsers on other origins: preflights, and the origin checked against the credential's project (rest-compat/cors.ts).
  const cors = await installCors(app, { config, logger, router, broadcastUrl: opts.broadcastUrl });
  app.addHook('onClose', async () => await cors.stop());
  app.setErrorHandler((err, req, reply) => {
    const e = err as Error & { statusCode?: number; code?: string };
    if (!(e instanceof AppError) && typeof e.statusCode === 'number' && e.statusCode < 500) {
      const code =
        e.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : e.statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'BAD_REQUEST';
      if (code === 'UNSUPPORTED_MEDIA_TYPE') {
        // Say what to send: every REST body here is JSON (uploads have routes of their own).
        const sent = String(req.headers['content-type'] ?? '(none)').split(';')[0];
        return render(
          reply,
          new AppError(
            code,
            `Unsupported content type ${sent}: send the body as JSON (Content-Type: application/json)`,
            {
              expected: 'application/json',
            },
          ),
        );
      }
      return render(reply, new AppError(code, e.message));
    }
    return render(reply, err);
  });
  // Multipart bodies are streamed by whoever serves the route (GraphQL multipart requests, storage uploads).
  app.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
  app.setNotFoundHandler((req, reply) => {
    // The path as the caller wrote it (before /v1/* became /api/v1/*), and for the data API the actions it has.
    const path = (req.originalUrl ?? req.url).split('?')[0]!;
    const data = /^\/(?:api\/)?v1\/([^/]*)$/.exec(path);
    if (data)
      return render(
        reply,
        new AppError(
          'ROUTE_NOT_FOUND',
          `No data action "${data[1]}" (${req.method} ${path}); the actions are POST /v1/${DATA_ACTION_NAMES.join(', /v1/')}`,
          { actions: DATA_ACTION_NAMES },
        ),
      );
    return render(reply, new AppError('ROUTE_NOT_FOUND', `No route for ${req.method} ${path}`));
  });

  // The plan's requests per minute, per project (router/request-quota.ts): counted once the caller is known.
  const planLimits = createPlanLimitsReader(router);
  if (router.broadcastUrl) await planLimits.listen(router.broadcastUrl, logger);
  const quota = await startRequestQuota({ limits: planLimits, broadcastUrl: router.broadcastUrl, logger });
  app.addHook('onClose', async () => {
    await quota.stop();
    await planLimits.stop();
  });
  // Failed operator-key attempts per client address, in this process (platform/rate-limit.ts).
  const operatorKeyFailures = createFailureLimiter({ limit: OPERATOR_KEY_FAILURES_PER_ADDRESS, windowMs: 15 * 60_000 });
  const contextOf = async (req: FastifyRequest): Promise<RequestContext> => {
    const creds = credentialsOf(req.headers);
    const operatorKey = creds.bearer?.startsWith(OPERATOR_KEY_PREFIX) === true;
    if (operatorKey) operatorKeyFailures.check(`ip:${req.ip}`);
    // A project already past its request rate (or suspended) is refused before its credential is checked: the
    // refusal grants nothing, and a flood of them (bench N1: 360-400 a second) would otherwise each take a credential
    // check's round trip. A credential revoked a moment ago may get this answer instead of 401 until its NOTIFY lands.
    const known = peekPrincipal(creds, router.credentials);
    if (known && 'projectId' in known) {
      const refused = quota.refusal(known.projectId);
      if (refused) {
        notePrincipal(req, known);
        throw refused;
      }
    }
    let principal: Principal;
    try {
      principal = await authenticate(creds, router.handles, String(req.id), router.credentials);
    } catch (err) {
      if (operatorKey && err instanceof AppError && err.code === 'INVALID_TOKEN')
        operatorKeyFailures.fail(`ip:${req.ip}`);
      throw err;
    }
    // An operator key opens the admin API only: every other address refuses it before anything runs.
    if (principal.kind === 'operator' && !OPERATOR_PATH.test(req.url))
      throw operatorOutsideAdmin(`call ${req.method} ${req.url.split('?')[0]!.slice(0, 200)}`);
    notePrincipal(req, principal);
    await cors.check(req, principal);
    const over = quota.hit(principal);
    if (over) await over;
    noteProject(req, principal);
    return { requestId: String(req.id), principal, ip: req.ip };
  };

  const execute = router.run;
  // Fair shares of this process's event loop: an operation acting for a project takes a turn first (request-lane.ts).
  const lane = createRequestLane({ saturatedFor: (projectId) => loadPressure.saturatedFor(projectId) });
  const NO_TURN = () => {};
  const turnOf = (principal: Principal): Promise<() => void> | (() => void) =>
    'projectId' in principal && typeof principal.projectId === 'string' ? lane.enter(principal.projectId) : NO_TURN;

  /** Anonymous calls naming a project (webhooks, public storage, hosted sign-in): refused while it is suspended. */
  const checkProject = async (projectId: unknown): Promise<void> => {
    if (!isUuid(projectId)) return;
    const plan = planLimits.peekPlan(projectId) ?? (await planLimits.plan(projectId));
    if (plan?.suspended) throw errors.projectSuspended(projectId, plan.suspended);
  };

  /** The fields of an input type of the public schema (to list what a body may hold). */
  const inputFieldsOf = (type: string): string[] => {
    const t = router.apiSchema.getType(type);
    return t && isInputObjectType(t) ? Object.keys(t.getFields()) : [];
  };
  for (const route of prepared) {
    const { row } = route;
    app.route({
      method: row.method,
      url: row.path,
      handler: async (req, reply) => {
        const ctx = await contextOf(req);
        if (!allowed(row, ctx.principal)) {
          if (ctx.principal.kind === 'publishable')
            throw publishableRefusal(`call ${row.method} ${row.path} (${AUTH_HINT[row.auth]})`);
          throw ctx.principal.kind === 'anonymous'
            ? errors.unauthenticated(AUTH_HINT[row.auth])
            : errors.forbidden(AUTH_HINT[row.auth]);
        }
        const variables = variablesFor(
          row,
          {
            body: req.body,
            params: req.params as Record<string, string>,
            query: req.query as Record<string, unknown>,
            headers: req.headers,
          },
          route.types,
        );
        // The operation's child logger is made only when something logs (a child costs more than a small read).
        const base = req.log;
        let child: FastifyBaseLogger | undefined;
        Object.defineProperty(req, 'log', {
          get: () => (child ??= base.child({ operation: row.id })),
          set: (value: FastifyBaseLogger) => (child = value),
          configurable: true,
          enumerable: true,
        });
        const leave = await turnOf(ctx.principal);
        let result;
        try {
          result = await lane.within(leave, () => execute(row.operation, variables, ctx));
        } finally {
          leave();
        }
        if (result.errors?.length) {
          // A variable graphql-js refused is named the way the request sent it (`table: is required`).
          const renamed =
            result.errors[0] && !result.errors[0].path
              ? restVariableError(row, result.errors[0].message, inputFieldsOf)
              : undefined;
          if (renamed) return sendError(reply, renamed, req.log);
          return sendGraphQLErrors(reply, result.errors, req.log);
        }
        if (row.response === 'http') return sendHttpResult(reply, result.data ?? {});
        if (row.status === 204) return reply.code(204).send();
        const data = result.data ?? {};
        const body = row.unwrap ? data[Object.keys(data)[0]!] : data;
        return reply.code(row.status).send(body);
      },
    });
  }

  app.route({
    method: ['GET', 'POST'],
    url: '/graphql',
    handler: async (req, reply) => {
      // A browser opening the address gets the explorer (GraphiQL, served offline from the package).
      if (wantsGraphiQL(req)) return sendGraphiQL(reply);
      const ctx = await contextOf(req);
      if (!isMultipartRequest(req)) {
        const leave = await turnOf(ctx.principal);
        try {
          return await lane.within(leave, () =>
            serveGraphQL(router, req, reply, ctx, undefined, { jsonMaxDepth: config.jsonMaxDepth }),
          );
        } finally {
          leave();
        }
      }
      const body = await readMultipartRequest(req, reply, { maxFileSize: config.storageMaxUploadBytes });
      checkJsonValue(body, { maxDepth: config.jsonMaxDepth, where: 'operations' });
      return serveGraphQL(router, req, reply, ctx, body, { jsonMaxDepth: config.jsonMaxDepth });
    },
  });

  for (const mount of opts.mounts ?? []) mountSubgraphHttp(app, mount, contextOf, router, cors.checkSocket);

  const rawHandlers = opts.rawHandlers ?? RAW_HANDLERS;
  for (const mod of rawHandlers) {
    await mod.register(app, {
      config,
      logger,
      router,
      execute,
      contextOf,
      sendError: (reply, err) => sendError(reply, err, reply.request.log),
      checkProject,
    });
  }

  const openapi = assembleOpenApi(
    prepared.map((p) => p.row),
    router.apiSchema,
    config,
    [...rawHandlers.map((m) => m.openapi ?? {}), HEALTH_OPENAPI],
  );
  app.get('/openapi.json', async () => openapi);
  const docs = renderDocsPage(openapi);
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').send(docs));
  // The landing page and the dashboard (rest-compat/dashboard.ts): a web app on the public API.
  await registerDashboard(app);
  registerHealthRoutes(app, router.handles);
  return app;
}
