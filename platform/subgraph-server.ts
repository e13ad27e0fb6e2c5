// Split mode: one subgraph as its own HTTP server. It answers only calls carrying the router's signed
// context; anything else is refused with 401.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { INTERNAL_CONTEXT_HEADER, verifyContext, type RequestContext } from './auth.ts';
import type { RunningSubgraph } from './subgraph.ts';
import type { Logger } from './logger.ts';
import {
  isMultipartRequest,
  readMultipartRequest,
  sendWebResponse,
  toWebRequest,
  callerWebSocketServer,
} from './http-bridge.ts';
import { shapeError } from './errors.ts';
import type { Config } from './config.ts';
import { logUpgrade, noteProject, observeHttp } from './http-observe.ts';
import {
  clientErrorHandler,
  edgeServerOptions,
  frameworkErrorsOf,
  installEdge,
  underPath,
  upgradeRequestId,
  type EdgeConfig,
} from './http-edge.ts';

type GraphQLBody = { query?: unknown; variables?: Record<string, unknown>; operationName?: string };

/**
 * Builds the HTTP server of a running subgraph (POST /graphql, GET /readyz, GET /livez, its SubgraphHttp endpoint).
 * /graphql also takes GraphQL multipart requests (file uploads forwarded by the router as a stream);
 * `maxFileSize` bounds each file.
 */
export function createSubgraphServer(
  sub: RunningSubgraph,
  secret: string,
  logger: Logger,
  config: EdgeConfig,
  opts: { maxFileSize?: number; observe?: Pick<Config, 'accessLog' | 'metricsToken'> } = {},
): FastifyInstance {
  const graphqlError = (status: number, code: string, message: string) => ({
    errors: [{ message, extensions: { code, http: { status } } }],
  });
  // GraphQL-shaped errors on /graphql, the REST error body on the subgraph's own endpoint.
  const render = (reply: FastifyReply, err: unknown): FastifyReply => {
    const shaped = shapeError(err);
    if (shaped.masked) logger.error({ err }, 'masked error');
    const retry = shaped.details?.retry_after;
    if (typeof retry === 'number') void reply.header('retry-after', String(retry));
    const body = reply.request.url.startsWith('/graphql')
      ? graphqlError(shaped.status, shaped.code, shaped.message)
      : {
          error: {
            code: shaped.code,
            message: shaped.message,
            ...(shaped.details ? { details: shaped.details } : {}),
            request_id: String(reply.request.id),
          },
        };
    return reply.code(shaped.status).type('application/json').send(body);
  };
  const app = Fastify({
    ...edgeServerOptions(config),
    frameworkErrors: frameworkErrorsOf(render),
    clientErrorHandler,
    loggerInstance: logger.child({ component: `subgraph-server:${sub.name}` }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
  });
  // Streams of the subgraph's endpoint (realtime) and readiness and liveness probes are never shed.
  const streams = sub.http?.prefix;
  // Callers' JSON was bounded at the front door; what the router forwards wraps it a few levels deeper (variables,
  // representations), so the nesting limit here leaves that room.
  installEdge(
    app,
    { ...config, jsonMaxDepth: config.jsonMaxDepth + 8 },
    {
      render,
      exempt: (url) =>
        underPath(url, '/readyz') || underPath(url, '/livez') || (streams !== undefined && underPath(url, streams)),
    },
  );
  app.setErrorHandler((err, _req, reply) => render(reply, err));
  // Multipart bodies are left unread here: graphql-upload streams them (after the context is checked).
  app.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
  app.post('/graphql', async (req, reply) => {
    let ctx;
    try {
      ctx = await verifyContext(req.headers[INTERNAL_CONTEXT_HEADER] as string | undefined, secret);
    } catch (err) {
      return reply
        .code(401)
        .send(graphqlError(401, 'UNAUTHENTICATED', `This subgraph only answers the router: ${(err as Error).message}`));
    }
    noteProject(req, ctx.principal);
    let body = (req.body ?? {}) as GraphQLBody;
    if (isMultipartRequest(req)) {
      try {
        body = (await readMultipartRequest(req, reply, { maxFileSize: opts.maxFileSize ?? Infinity })) as GraphQLBody;
      } catch (err) {
        const shaped = shapeError(err);
        return reply.code(shaped.status).send(graphqlError(shaped.status, shaped.code, shaped.message));
      }
      if (Array.isArray(body))
        return reply.code(400).send(graphqlError(400, 'BAD_REQUEST', 'batched operations are not supported'));
    }
    if (typeof body.query !== 'string')
      return reply.code(400).send(graphqlError(400, 'BAD_REQUEST', 'query must be a string'));
    return reply.send(await sub.execute(body.query, body.variables, ctx, body.operationName));
  });
  // A SubgraphHttp endpoint (e.g. realtime), reached through the front door with its signed context.
  const http = sub.http;
  if (http) {
    for (const url of [http.prefix, `${http.prefix}/*`]) {
      app.route({
        method: ['GET', 'POST'],
        url,
        handler: async (req, reply) => {
          let ctx;
          try {
            ctx = await verifyContext(req.headers[INTERNAL_CONTEXT_HEADER] as string | undefined, secret);
          } catch (err) {
            return reply.code(401).send({
              error: {
                code: 'UNAUTHENTICATED',
                message: `This endpoint only answers the front door: ${(err as Error).message}`,
              },
            });
          }
          try {
            return sendWebResponse(reply, await http.fetch(toWebRequest(req, reply), ctx));
          } catch (err) {
            const shaped = shapeError(err);
            return reply
              .code(shaped.status)
              .send({ error: { code: shaped.code, message: shaped.message, request_id: ctx.requestId } });
          }
        },
      });
    }
    if (http.websocket) serveWebSockets(app, http.prefix, http.websocket, secret);
  }
  app.get('/livez', async () => ({ status: 'ok' }));
  if (opts.observe) observeHttp(app, { config: opts.observe, logger });
  app.get('/readyz', async (_req, reply) => {
    const report = await sub.health();
    return reply.code(report.status === 'ok' ? 200 : 503).send({ subgraph: sub.name, ...report });
  });
  return app;
}

/**
 * WebSockets at the endpoint's prefix, forwarded by the front door (platform/http-bridge.ts): the upgrade
 * needs the signed context header, or the socket is refused with 401; the connection params then carry
 * the signed context (and nothing else the caller sent), which is verified again as the caller's context.
 */
function serveWebSockets(
  app: FastifyInstance,
  prefix: string,
  serve: NonNullable<RunningSubgraph['http']>['websocket'] & {},
  secret: string,
): void {
  const wss = callerWebSocketServer();
  serve(
    wss,
    async (params): Promise<RequestContext> =>
      await verifyContext(
        typeof params[INTERNAL_CONTEXT_HEADER] === 'string' ? params[INTERNAL_CONTEXT_HEADER] : undefined,
        secret,
      ),
  );
  app.server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    // The front door's id of the socket (X-Request-Id), logged and echoed like an HTTP request's.
    const id = upgradeRequestId(req);
    const refuse = (status: number, text: string) => {
      logUpgrade(app, req, { route: path === prefix || path.startsWith(`${prefix}/`) ? prefix : 'unmatched', status });
      socket.end(`HTTP/1.1 ${status} ${text}\r\nX-Request-Id: ${id}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return refuse(404, 'Not Found');
    const header = req.headers[INTERNAL_CONTEXT_HEADER];
    verifyContext(typeof header === 'string' ? header : undefined, secret).then(
      (ctx) =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          logUpgrade(app, req, {
            route: prefix,
            status: 101,
            project: 'projectId' in ctx.principal ? ctx.principal.projectId : undefined,
          });
          wss.emit('connection', ws, req);
        }),
      () => refuse(401, 'Unauthorized'),
    );
  });
  app.addHook('onClose', async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(() => r(undefined)));
  });
}
