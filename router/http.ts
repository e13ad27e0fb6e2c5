// Serves the router's Apollo Server on a Fastify route (POST and GET /graphql).
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import processRequest from 'graphql-upload/processRequest.mjs';
import type { RequestContext } from '../platform/auth.ts';
import { AppError } from '../platform/errors.ts';

/** True for a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec). */
export function isMultipartRequest(req: FastifyRequest): boolean {
  return /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
}

/**
 * Reads the operations of a GraphQL multipart request; files become `Upload` values whose streams the
 * resolvers read (graphql-upload buffers them in temporary files, never in memory). Like Apollo's own
 * CSRF prevention, it needs a header a browser form cannot send.
 */
export async function readMultipartRequest(req: FastifyRequest, reply: FastifyReply, opts: { maxFileSize: number; maxFiles?: number }): Promise<unknown> {
  if (!req.headers['apollo-require-preflight'] && !req.headers['x-apollo-operation-name']) {
    throw new AppError('BAD_REQUEST', 'A multipart GraphQL request needs an `apollo-require-preflight: true` (or `x-apollo-operation-name`) header');
  }
  try {
    return await processRequest(req.raw, reply.raw, { maxFileSize: opts.maxFileSize, maxFiles: opts.maxFiles ?? 10 });
  } catch (err) {
    const status = (err as { status?: number }).status;
    throw new AppError(status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', `GraphQL multipart request: ${(err as Error).message}`);
  }
}

/** Hands one HTTP request to Apollo Server and writes its answer; `body` replaces the parsed body (multipart). */
export async function serveGraphQL(apollo: ApolloServer<RequestContext>, req: FastifyRequest, reply: FastifyReply, ctx: RequestContext, body?: unknown): Promise<void> {
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  // The multipart body is already read into operations: Apollo sees a JSON request.
  if (body !== undefined) headers.set('content-type', 'application/json');
  const search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  const response = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: req.method.toUpperCase(), headers, search, body: body ?? req.body },
    context: async () => ctx,
  });
  for (const [key, value] of response.headers) void reply.header(key, value);
  void reply.code(response.status ?? 200);
  if (response.body.kind === 'complete') {
    await reply.send(response.body.string);
    return;
  }
  let out = '';
  for await (const chunk of response.body.asyncIterator) out += chunk;
  await reply.send(out);
}
