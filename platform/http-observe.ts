// What every Tessera HTTP server reports about each request: Prometheus series (platform/metrics.ts) and one
// access-log line (method, route, status, duration, request id, project), and the GET /metrics route itself.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isNonPublicAddress } from './addresses.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Principal } from './auth.ts';
import { upgradeRequestId } from './http-edge.ts';
import { httpDuration, httpRequests, registry } from './metrics.ts';
import { loadPressure } from './load-pressure.ts';

const PROJECT = Symbol('tessera.project');
type Noted = FastifyRequest & { [PROJECT]?: string };

/** Records the project a request acts for (from its authenticated principal), for the access log. */
export function noteProject(req: FastifyRequest, principal: Principal): void {
  if ('projectId' in principal) (req as Noted)[PROJECT] = principal.projectId;
}

/** Where `logUpgrade` writes for each app observed with access logging on. */
const upgradeLogs = new WeakMap<FastifyInstance, (fields: Record<string, unknown>) => void>();

/**
 * The access line of a WebSocket upgrade of `app` (Fastify never sees upgrades, so `observeHttp`'s hook cannot write
 * it): the same line as an HTTP request's (`msg: "request"`, method, route, status, request id, project), with the
 * endpoint's prefix as the route and 101 for an accepted socket. Nothing when `app` has no access log.
 */
export function logUpgrade(
  app: FastifyInstance,
  req: IncomingMessage,
  line: { route: string; status: number; project?: string },
): void {
  upgradeLogs.get(app)?.({
    method: req.method ?? 'GET',
    route: line.route,
    status: line.status,
    request_id: upgradeRequestId(req),
    project: line.project,
  });
}

function sameToken(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

/**
 * Adds the per-request metrics and access log to `app`, and GET /metrics (Prometheus text format; with
 * TESSERA_METRICS_TOKEN set, only for `Authorization: Bearer <token>`; without it, only to loopback and private
 * addresses).
 */
export function observeHttp(
  app: FastifyInstance,
  opts: { config: Pick<Config, 'accessLog' | 'metricsToken'>; logger: Logger },
): void {
  const access = opts.logger.child({ component: 'access' });
  // The level does not change while the process runs: below info, no line is even built.
  const logAccess = opts.config.accessLog && access.isLevelEnabled('info');
  if (logAccess) upgradeLogs.set(app, (fields) => access.info(fields, 'request'));
  app.addHook('onResponse', (req, reply, done) => {
    // The route template (`/storage/api/v1/objects/:id`), never the raw path: bounded label values, no ids or secrets.
    const route = req.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    const ms = reply.elapsedTime;
    httpRequests.inc({ method: req.method, route, status });
    // A project's background work in this process yields while other projects' requests are being answered.
    loadPressure.noteRequest((req as Noted)[PROJECT]);
    httpDuration.observe({ method: req.method, route, status }, ms / 1000);
    if (logAccess)
      access.info(
        {
          method: req.method,
          route,
          status: reply.statusCode,
          duration_ms: Math.round(ms * 1000) / 1000,
          request_id: String(req.id),
          project: (req as Noted)[PROJECT],
        },
        'request',
      );
    done();
  });
  const token = opts.config.metricsToken;
  app.get('/metrics', async (req, reply) => {
    // Without a token, only the machine itself and private networks (a Prometheus beside it, a cluster's scraper) are
    // answered: the platform's traffic per route is not for anyone on the public address.
    if (!token && !isNonPublicAddress(req.ip.replace(/^::ffff:/, ''))) {
      return reply.code(403).send({
        error: {
          code: 'FORBIDDEN',
          message:
            'metrics are served to loopback and private addresses only; set TESSERA_METRICS_TOKEN to scrape from elsewhere',
          request_id: String(req.id),
        },
      });
    }
    if (token) {
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!given || !sameToken(given, token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({
            error: {
              code: 'UNAUTHENTICATED',
              message: 'metrics need Authorization: Bearer <TESSERA_METRICS_TOKEN>',
              request_id: String(req.id),
            },
          });
      }
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
