// Serves the router's Apollo Server on a Fastify route (POST and GET /graphql).
import { HeaderMap, type ApolloServer } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLError } from 'graphql';
import type { RequestContext } from '../platform/auth.ts';
import { parseCheckedJson } from '../platform/input-guard.ts';

// Multipart reading is shared with the split-mode subgraph servers, so it lives in platform/.
export { isMultipartRequest, readMultipartRequest } from '../platform/http-bridge.ts';

export type GraphQLHttpRouter = {
  apollo: ApolloServer<RequestContext>;
  checkLimits: (
    query: string,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | undefined,
  ) => GraphQLError[];
  fastQuery?: (
    query: string,
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    ctx: RequestContext,
  ) => Promise<unknown>;
};

/**
 * Whether Apollo Server would answer this request as plain `application/json` with nothing of its own to add: a
 * JSON POST (so no CSRF question), no `extensions` (persisted queries), and an Accept that does not ask for
 * `application/graphql-response+json`.
 */
function plainJsonPost(req: FastifyRequest, op: Record<string, unknown>): boolean {
  if (req.method !== 'POST' || op.extensions !== undefined) return false;
  // Anything Apollo Server would refuse is left to it to refuse.
  const vars = op.variables;
  if (vars !== undefined && vars !== null && (typeof vars !== 'object' || Array.isArray(vars))) return false;
  if (op.operationName !== undefined && op.operationName !== null && typeof op.operationName !== 'string') return false;
  const type = req.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) return false;
  const accept = req.headers.accept;
  return accept === undefined || accept === '*/*' || accept === 'application/json';
}

/** The operation of a request: the body's (POST) or the query string's (GET, variables as JSON text, checked like a body). */
function operationOf(
  req: FastifyRequest,
  body: unknown,
  jsonMaxDepth: number,
): { query?: unknown; operationName?: unknown; variables?: unknown } {
  if (req.method === 'GET') {
    const q = req.query as Record<string, unknown>;
    const json = (key: string) =>
      typeof q[key] === 'string' && q[key]
        ? parseCheckedJson(q[key], { maxDepth: jsonMaxDepth, where: `query parameter ${key}` })
        : undefined;
    const variables = json('variables');
    json('extensions');
    return { query: q.query, operationName: q.operationName, variables };
  }
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/** Hands one HTTP request to Apollo Server and writes its answer; `body` replaces the parsed body (multipart). */
export async function serveGraphQL(
  router: GraphQLHttpRouter,
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: RequestContext,
  body?: unknown,
  opts: { jsonMaxDepth?: number } = {},
): Promise<void> {
  // The limits first: a document over them is never parsed whole, validated or planned.
  const op = operationOf(req, body ?? req.body, opts.jsonMaxDepth ?? 64);
  if (typeof op.query === 'string') {
    const variables =
      op.variables && typeof op.variables === 'object' && !Array.isArray(op.variables)
        ? (op.variables as Record<string, unknown>)
        : undefined;
    const problems = router.checkLimits(
      op.query,
      typeof op.operationName === 'string' ? op.operationName : undefined,
      variables,
    );
    if (problems.length > 0) {
      await reply
        .code(400)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ errors: problems.map((e) => e.toJSON()) }));
      return;
    }
    if (body === undefined && router.fastQuery && plainJsonPost(req, op as Record<string, unknown>)) {
      const answer = await router.fastQuery(
        op.query,
        typeof op.operationName === 'string' ? op.operationName : undefined,
        variables,
        ctx,
      );
      if (answer) {
        // As Apollo Server writes it: no cache hints in the schema make every answer `no-store`; a final newline.
        await reply
          .code(200)
          .type('application/json; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(`${JSON.stringify(answer)}\n`);
        return;
      }
    }
  }
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  // The multipart body is already read into operations: Apollo sees a JSON request.
  if (body !== undefined) headers.set('content-type', 'application/json');
  const search = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  const response = await router.apollo.executeHTTPGraphQLRequest({
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
