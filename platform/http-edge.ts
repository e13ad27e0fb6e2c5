// The HTTP edge of every Tessera server (front door, split-mode router and subgraph servers): what happens to a
// request before any route sees it. Timeouts (headers, whole request, idle socket, keep-alive) against slow
// clients; load shedding (503 + Retry-After) past a cap of open connections or requests in flight, instead of
// collapsing; the web framework's own refusals (bad URL encoding, over-long path parameters, unparsable request
// lines, bad JSON, empty or oversized bodies, unknown content types) rendered in the documented error shape; JSON
// bodies parsed with a nesting limit; query strings, path parameters and form fields checked for text PostgreSQL
// cannot store (platform/input-guard.ts).
import crypto from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyServerOptions, RawRequestDefaultExpression } from 'fastify';
import type { Config } from './config.ts';
import { AppError, frameworkErrorCode, ERROR_TABLE } from './errors.ts';
import { checkTextRecord, parseCheckedJson } from './input-guard.ts';

export type EdgeConfig = Pick<
  Config,
  | 'bodyLimit'
  | 'jsonMaxDepth'
  | 'maxConnections'
  | 'maxInflight'
  | 'headersTimeoutMs'
  | 'requestTimeoutMs'
  | 'idleTimeoutMs'
  | 'keepAliveTimeoutMs'
>;

/** Path parameters up to this long are routed (ids, slugs, object names); longer ones are a 414 in the error shape. */
const MAX_PARAM_LENGTH = 1024;
/** Seconds a shed caller is told to wait. */
const RETRY_AFTER_S = 1;

/**
 * The X-Request-Id a caller may choose: up to 128 letters, digits and `._:-` (a UUID, a W3C trace id, a load
 * balancer's id). Anything else (longer, spaces, quotes, control or non-ASCII bytes) is replaced, so a caller cannot
 * forge log fields, flood a log line or pass a value a log search would choke on.
 */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of a request: its X-Request-Id when sane (the caller's at the front door; the front door's, router's or
 * subgraph's on an internal hop, which always send the id of the request they serve), else a new UUID.
 */
export function requestIdOf(req: Pick<RawRequestDefaultExpression, 'headers'>): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/**
 * The id of a WebSocket upgrade (which no Fastify hook sees): `requestIdOf`, written back on the request's
 * X-Request-Id, so that every listener of the upgrade (the access line, the 101's echo, the forwarder's hop to the
 * subgraph, the caller's context) reads the same id, and a caller's unsafe one is gone for all of them.
 */
export function upgradeRequestId(req: IncomingMessage): string {
  const id = requestIdOf(req);
  req.headers['x-request-id'] = id;
  return id;
}

/**
 * Server options of the edge: timeouts, the router's parameter length and the request id (`requestIdOf`, so every
 * hop logs the id of the request it was handed rather than one of its own). The timeouts are checked every second
 * (Node checks every 30 s by default, which would let a slow client hold a socket 30 s past its deadline).
 */
export function edgeServerOptions(config: EdgeConfig): Pick<
  FastifyServerOptions,
  'connectionTimeout' | 'keepAliveTimeout' | 'requestTimeout' | 'routerOptions' | 'genReqId' | 'requestIdLogLabel'
> & {
  http: http.ServerOptions;
} {
  return {
    connectionTimeout: config.idleTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1000,
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    genReqId: requestIdOf,
    // Every line about a request names it as the access line does: one grep for `"request_id":"<id>"` finds them all.
    requestIdLogLabel: 'request_id',
  };
}

/** Writes an error straight on a socket (no request object exists for an unparsable request). */
function writeRawError(socket: Socket, status: number, code: string, message: string, extraHeaders = ''): void {
  const body = JSON.stringify({ error: { code, message, request_id: crypto.randomUUID() } });
  socket.write(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extraHeaders}\r\n${body}`,
  );
}

/** Node's client errors (a request that cannot even be parsed, headers too large, too slow): the error shape, then close. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
      writeRawError(socket, 408, 'REQUEST_TIMEOUT', 'The request was not received in time');
    else if (err.code === 'HPE_HEADER_OVERFLOW')
      writeRawError(socket, 431, 'HEADERS_TOO_LARGE', 'The request headers are too large');
    else writeRawError(socket, 400, 'BAD_REQUEST', `The HTTP request is malformed (${err.code ?? 'parse error'})`);
  }
  socket.destroy();
}

export type EdgeOptions = {
  /** Renders an error in the shape the route's callers expect (REST or GraphQL). */
  render: (reply: FastifyReply, err: unknown) => FastifyReply;
  /** Requests never shed (health checks, long-lived streams). */
  exempt?: (url: string) => boolean;
};

/** Live load figures of a server with the edge installed (tests, health). */
export type EdgeLoad = { connections: () => number; inflight: () => number };

/**
 * Installs the edge on an app created with `edgeServerOptions` and `frameworkErrors: frameworkErrorsOf(render)`,
 * before its routes. Returns live load figures.
 */
export function installEdge(app: FastifyInstance, config: EdgeConfig, opts: EdgeOptions): EdgeLoad {
  let open = 0;
  let inflight = 0;
  const server = app.server;
  // Past twice the cap the process has no room left to even answer: Node drops such connections at once.
  server.maxConnections = config.maxConnections * 2;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
  });

  // Every answer names its request id (a callback hook: no promise and no extra microtask turn per request).
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onRequest', (req, reply, done) => {
    if (opts.exempt?.(req.url)) return done();
    if (open > config.maxConnections || inflight >= config.maxInflight) {
      void reply.header('retry-after', String(RETRY_AFTER_S));
      if (open > config.maxConnections) void reply.header('connection', 'close');
      const which =
        open > config.maxConnections
          ? `${config.maxConnections} open connections (TESSERA_MAX_CONNECTIONS)`
          : `${config.maxInflight} requests in progress (TESSERA_MAX_INFLIGHT)`;
      opts.render(
        reply,
        new AppError('SERVICE_UNAVAILABLE', `The server is at capacity: ${which}; retry after ${RETRY_AFTER_S} s`, {
          reason: 'overloaded',
          retry_after: RETRY_AFTER_S,
        }),
      );
      return;
    }
    inflight++;
    reply.raw.once('close', () => inflight--);
    done();
  });

  // JSON bodies: parsed with the nesting limit and the text check (replaces Fastify's parser).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: config.bodyLimit },
    (_req, body, done) => {
      const text = body as string;
      if (text.length === 0)
        return done(
          new AppError('BAD_REQUEST', 'The body is empty but its content type is application/json'),
          undefined,
        );
      try {
        done(null, parseCheckedJson(text, { maxDepth: config.jsonMaxDepth, where: 'body' }));
      } catch (err) {
        done(err as Error, undefined);
      }
    },
  );

  // Query strings, path parameters and form fields: storable text only (JSON bodies were checked when parsed).
  app.addHook('preValidation', (req, _reply, done) => {
    try {
      checkTextRecord(req.query, 'query');
      checkTextRecord(req.params, 'path');
      const type = String(req.headers['content-type'] ?? '');
      if (/^application\/x-www-form-urlencoded/i.test(type) && !Buffer.isBuffer(req.body))
        checkTextRecord(req.body, 'body');
      done();
    } catch (err) {
      done(err as Error);
    }
  });

  return { connections: () => open, inflight: () => inflight };
}

/** Fastify's `frameworkErrors`: bad URL encoding and over-long path parameters, in the error shape. */
export function frameworkErrorsOf(render: EdgeOptions['render']): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (err, _req, reply) => {
    const e = err as Error & { statusCode?: number };
    const status = typeof e.statusCode === 'number' && e.statusCode < 500 ? e.statusCode : 400;
    const code = frameworkErrorCode(status);
    const message =
      status === 414
        ? `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`
        : `The URL is not valid: ${ERROR_TABLE[code].message.toLowerCase()} (bad percent-encoding?)`;
    render(reply, new AppError(code, message));
  };
}

/** True for a request whose URL path is `path` or below it. */
export function underPath(url: string, path: string): boolean {
  return url === path || url.startsWith(`${path}?`) || url.startsWith(`${path}/`);
}
