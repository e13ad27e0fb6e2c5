// Serves the router's Apollo Server on a Fastify route (POST and GET /graphql).
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../platform/auth.ts';

// Multipart reading is shared with the split-mode subgraph servers, so it lives in platform/.
export { isMultipartRequest, readMultipartRequest } from '../platform/http-bridge.ts';

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
