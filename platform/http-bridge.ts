// Bridges Fastify requests and WHATWG Request/Response for SubgraphHttp endpoints (platform/subgraph.ts):
// the front door and the split-mode subgraph server both hand such endpoints a Request and stream back
// their Response; the front door in split mode forwards the Request to the subgraph's server.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_CONTEXT_HEADER, signContext, type RequestContext } from './auth.ts';
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
  return new Request(new URL(req.url, 'http://tessera.internal'), { method: req.method, headers, body, signal: abort.signal });
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
export function remoteSubgraphHttp(baseUrl: string, secret: string): Pick<SubgraphHttp, 'fetch'> {
  const origin = new URL(baseUrl).origin;
  return {
    async fetch(request: Request, ctx: RequestContext): Promise<Response> {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.set(INTERNAL_CONTEXT_HEADER, await signContext(ctx, secret));
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text();
      return await fetch(`${origin}${url.pathname}${url.search}`, { method: request.method, headers, body, signal: request.signal, redirect: 'error' });
    },
  };
}
