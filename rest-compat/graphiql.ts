// The GraphQL explorer a browser gets at `GET /graphql`: GraphiQL rendered by @graphql-yoga/render-graphiql, whose
// package carries the whole editor (scripts, styles, workers) inline, so the page loads nothing from a CDN and works
// offline. It queries the router at /graphql, whose introspection carries every description of the supergraph.
// The package is imported on the first request for the page, not with the process: its module is ~30 MB of strings
// (the editor's code, held once as the module's source and once as the value it exports) that an API server that
// never shows the explorer would carry for nothing.
import type { FastifyReply, FastifyRequest } from 'fastify';

const DEFAULT_QUERY = `# Tessera's supergraph. Put a credential in the Headers tab below, for example
#   {"X-Api-Key": "tsk_..."}  (a project's secret key; the publishable key tpk_... opens less)
#   {"Authorization": "Bearer <access token>"}  (a tenant or an end-user token)
# then open the documentation explorer (the book icon) to browse every type and field.

query Plans {
  plans { id name limits { maxProjects maxStorageBytes } }
}
`;

let page: Promise<string> | undefined;

/** The page, rendered once (about 10 MB of inline editor code). */
function graphiqlPage(): Promise<string> {
  page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) =>
    renderGraphiQL({
      title: 'Tessera GraphQL',
      endpoint: '/graphql',
      defaultQuery: DEFAULT_QUERY,
      headers: JSON.stringify({ 'X-Api-Key': '' }, null, 2),
      schemaDescription: true,
      inputValueDeprecation: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
    }),
  );
  return page;
}

/** A browser's navigation to /graphql: a GET without an operation that prefers HTML. */
export function wantsGraphiQL(req: FastifyRequest): boolean {
  if (req.method !== 'GET') return false;
  const query = req.query as Record<string, unknown> | undefined;
  if (query && (query.query !== undefined || query.extensions !== undefined)) return false;
  const accept = req.headers.accept ?? '';
  return accept.includes('text/html');
}

/** Answers the explorer page. */
export async function sendGraphiQL(reply: FastifyReply): Promise<FastifyReply> {
  const html = await graphiqlPage();
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "frame-ancestors 'none'")
    .send(html);
}
