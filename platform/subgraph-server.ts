// Split mode: one subgraph as its own HTTP server. It answers only calls carrying the router's signed
// context; anything else is refused with 401.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { INTERNAL_CONTEXT_HEADER, verifyContext } from './auth.ts';
import type { RunningSubgraph } from './subgraph.ts';
import type { Logger } from './logger.ts';
import { sendWebResponse, toWebRequest } from './http-bridge.ts';
import { shapeError } from './errors.ts';

/** Builds the HTTP server of a running subgraph (POST /graphql, GET /readyz). */
export function createSubgraphServer(sub: RunningSubgraph, secret: string, logger: Logger, bodyLimit: number): FastifyInstance {
  const app = Fastify({ loggerInstance: logger.child({ component: `subgraph-server:${sub.name}` }) as FastifyBaseLogger, disableRequestLogging: true, bodyLimit });
  app.post('/graphql', async (req, reply) => {
    let ctx;
    try {
      ctx = await verifyContext(req.headers[INTERNAL_CONTEXT_HEADER] as string | undefined, secret);
    } catch (err) {
      return reply.code(401).send({
        errors: [{ message: `This subgraph only answers the router: ${(err as Error).message}`, extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } }],
      });
    }
    const body = (req.body ?? {}) as { query?: string; variables?: Record<string, unknown>; operationName?: string };
    if (typeof body.query !== 'string') {
      return reply.code(400).send({ errors: [{ message: 'query must be a string', extensions: { code: 'BAD_REQUEST', http: { status: 400 } } }] });
    }
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
            return reply.code(401).send({ error: { code: 'UNAUTHENTICATED', message: `This endpoint only answers the front door: ${(err as Error).message}` } });
          }
          try {
            return sendWebResponse(reply, await http.fetch(toWebRequest(req, reply), ctx));
          } catch (err) {
            const shaped = shapeError(err);
            return reply.code(shaped.status).send({ error: { code: shaped.code, message: shaped.message, request_id: ctx.requestId } });
          }
        },
      });
    }
  }
  app.get('/readyz', async (_req, reply) => {
    const report = await sub.health();
    return reply.code(report.status === 'ok' ? 200 : 503).send({ subgraph: sub.name, ...report });
  });
  return app;
}
