// Bridges Fastify requests and WHATWG Request/Response for SubgraphHttp endpoints (platform/subgraph.ts):
// the front door and the split-mode subgraph server both hand such endpoints a Request and stream back
// their Response; the front door in split mode forwards the Request (and WebSockets) to the subgraph's
// server. Also reads GraphQL multipart requests, for the front door's /graphql and the subgraph servers.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import processRequest from 'graphql-upload/processRequest.mjs';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { INTERNAL_CONTEXT_HEADER, signContext, type RequestContext } from './auth.ts';
import { AppError } from './errors.ts';
import { upgradeRequestId } from './http-edge.ts';
import type { SubgraphHttp } from './subgraph.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade']);

/** The Fastify request as a WHATWG Request (a parsed JSON body is re-serialised); aborted when the response closes. */
export function toWebRequest(req: FastifyRequest, reply: FastifyReply): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || k === INTERNAL_CONTEXT_HEADER) continue;
    headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  const abort = new AbortController();
  // The response's close, not the request's: a request emits 'close' as soon as its body is read.
  reply.raw.once('close', () => abort.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.body !== undefined && req.body !== null;
  const body = hasBody ? (typeof req.body === 'string' ? req.body : JSON.stringify(req.body)) : undefined;
  return new Request(new URL(req.url, 'http://tessera.internal'), {
    method: req.method,
    headers,
    body,
    signal: abort.signal,
  });
}

/** Streams a WHATWG Response out through Fastify. */
export function sendWebResponse(reply: FastifyReply, response: Response): FastifyReply {
  reply.code(response.status);
  response.headers.forEach((value, key) => {
    if (!HOP_BY_HOP.has(key)) void reply.header(key, value);
  });
  if (!response.body) return reply.send();
  return reply.send(Readable.from(chunksOf(response.body)));
}

/** Reads any WHATWG ReadableStream (also ponyfilled ones, which Readable.fromWeb refuses). */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Split mode: an endpoint that forwards to the subgraph's own server with the signed context. */
export function remoteSubgraphHttp(baseUrl: string, secret: string): Pick<SubgraphHttp, 'fetch' | 'websocket'> {
  const origin = new URL(baseUrl).origin;
  return {
    async fetch(request: Request, ctx: RequestContext): Promise<Response> {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.set(INTERNAL_CONTEXT_HEADER, await signContext(ctx, secret));
      // The id of the request being served (the caller's header, when it was not sane, is not it).
      headers.set('x-request-id', ctx.requestId);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text();
      return await fetch(`${origin}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body,
        signal: request.signal,
        redirect: 'error',
      });
    },
    websocket(wss, authenticate) {
      wss.on('connection', (client, req) =>
        forwardWebSocket(
          client,
          `${origin.replace(/^http/, 'ws')}${req.url ?? '/'}`,
          (params) => authenticate(params, req),
          secret,
        ),
      );
    },
  };
}

/** Close codes a peer may send (RFC 6455 §7.4): 1005, 1006 and 1015 are only ever reported locally. */
function sendableClose(code: number): number {
  if (code === 1005) return 1000;
  if (
    code === 1000 ||
    (code >= 1001 && code <= 1014 && code !== 1004 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
  )
    return code;
  return 1011;
}

const INIT_TIMEOUT_MS = 10_000;

/**
 * Largest WebSocket message accepted anywhere (front door, subgraph servers, the forwarder between them): a
 * graphql-ws message is a small JSON document, and a bigger one, before or after authentication, is refused by
 * closing the socket (1009) instead of being buffered.
 */
export const WS_MAX_PAYLOAD = 1024 * 1024;

/**
 * The server side of a caller's socket. A protocol fault of the caller (a message over WS_MAX_PAYLOAD, a bad frame:
 * ws's `WS_ERR_*` codes) has already closed the socket with its code (1009, 1002...) when ws reports it as an
 * `'error'`; that report is not passed on, because graphql-ws prints every socket error with its stack: any anonymous
 * caller could fill the logs with one junk frame per connection.
 */
class CallerSocket extends WebSocket {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error' && /^WS_ERR_/.test(String((args[0] as { code?: unknown } | undefined)?.code))) return true;
    return super.emit(event, ...args);
  }
}

/**
 * The WebSocket server for callers' upgrades (the front door's and each subgraph server's): bounded messages, quiet
 * faults, and the 101 names the upgrade's request id as every HTTP answer does (platform/http-edge.ts).
 */
export function callerWebSocketServer(): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD, WebSocket: CallerSocket });
  wss.on('headers', (headers, req) => headers.push(`X-Request-Id: ${upgradeRequestId(req)}`));
  return wss;
}

/**
 * Forwards one graphql-ws (graphql-transport-ws) connection to a subgraph's server. The caller's first
 * message must be `connection_init`; its params are authenticated here, and the subgraph gets the signed
 * context instead of the caller's credentials: on the upgrade (`x-tessera-context`, or it refuses the
 * socket) and as the only connection param, which the subgraph server verifies again. Every later frame
 * is relayed unchanged both ways.
 */
function forwardWebSocket(
  client: WebSocket,
  upstreamUrl: string,
  authenticate: (params: Record<string, unknown>) => Promise<RequestContext>,
  secret: string,
): void {
  const queued: { data: RawData; binary: boolean }[] = [];
  let upstream: WebSocket | undefined;
  const timer = setTimeout(() => client.close(4408, 'Connection initialisation timeout'), INIT_TIMEOUT_MS);
  const start = async (first: RawData): Promise<void> => {
    clearTimeout(timer);
    let message: { type?: unknown; payload?: unknown };
    try {
      message = JSON.parse(first.toString()) as typeof message;
    } catch {
      return client.close(4400, 'Invalid message received');
    }
    if (message?.type !== 'connection_init') return client.close(4400, 'Expected connection_init first');
    const params =
      message.payload && typeof message.payload === 'object' ? (message.payload as Record<string, unknown>) : {};
    let token: string;
    let requestId: string;
    try {
      const ctx = await authenticate(params);
      token = await signContext(ctx, secret);
      requestId = ctx.requestId;
    } catch {
      return client.close(4403, 'Forbidden');
    }
    if (client.readyState !== WebSocket.OPEN) return;
    // The upgrade's id (the caller's when sane) goes on to the subgraph's process, as on every HTTP hop.
    const up = new WebSocket(upstreamUrl, client.protocol ? [client.protocol] : [], {
      headers: { [INTERNAL_CONTEXT_HEADER]: token, 'x-request-id': requestId },
      maxPayload: WS_MAX_PAYLOAD,
    });
    upstream = up;
    up.on('open', () => {
      up.send(JSON.stringify({ type: 'connection_init', payload: { [INTERNAL_CONTEXT_HEADER]: token } }));
      for (const m of queued) up.send(m.data, { binary: m.binary });
      queued.length = 0;
    });
    up.on('message', (data, binary) => {
      if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
    });
    up.on('close', (code, reason) => {
      if (client.readyState === WebSocket.OPEN) client.close(sendableClose(code), reason.toString());
    });
    up.on('error', () => {
      if (client.readyState === WebSocket.OPEN) client.close(1011, 'The service behind this endpoint is unavailable');
    });
  };
  let started = false;
  client.on('message', (data, binary) => {
    if (!started) {
      started = true;
      void start(data);
      return;
    }
    if (upstream?.readyState === WebSocket.OPEN) upstream.send(data, { binary });
    else queued.push({ data, binary });
  });
  client.on('close', () => {
    clearTimeout(timer);
    if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.terminate();
  });
  // ws has already started the close with the error's code and destroys the socket if the caller does not answer it;
  // terminating here could reset the socket before that frame is read. (A caller's protocol fault, such as a message
  // over WS_MAX_PAYLOAD, is not even reported: CallerSocket; its 'close' follows.)
  client.on('error', () => {
    clearTimeout(timer);
    if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.terminate();
  });
}

/** True for a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec). */
export function isMultipartRequest(req: FastifyRequest): boolean {
  return /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads the operations of a GraphQL multipart request; files become `Upload` values whose streams the
 * resolvers read (graphql-upload buffers them in temporary files, never in memory). Like Apollo's own
 * CSRF prevention, it needs a header a browser form cannot send. The route must leave multipart bodies
 * unread (a content-type parser that does nothing).
 */
export async function readMultipartRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  opts: { maxFileSize: number; maxFiles?: number },
): Promise<unknown> {
  if (!req.headers['apollo-require-preflight'] && !req.headers['x-apollo-operation-name']) {
    throw new AppError(
      'BAD_REQUEST',
      'A multipart GraphQL request needs an `apollo-require-preflight: true` (or `x-apollo-operation-name`) header',
    );
  }
  try {
    return await processRequest(req.raw, reply.raw, { maxFileSize: opts.maxFileSize, maxFiles: opts.maxFiles ?? 10 });
  } catch (err) {
    const status = (err as { status?: number }).status;
    throw new AppError(
      status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST',
      `GraphQL multipart request: ${(err as Error).message}`,
    );
  }
}
