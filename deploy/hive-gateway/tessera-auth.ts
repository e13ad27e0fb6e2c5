// Tessera's authentication as a Hive Gateway plugin. Tessera's subgraphs answer only calls carrying a context
// signed with the internal secret (x-tessera-context, platform/auth.ts): what Tessera's own router hands them
// after it has authenticated the caller. This plugin does the same in Hive Gateway: it authenticates the
// request's X-Api-Key or Authorization: Bearer with the tenant and identity subgraphs (router/authenticate.ts,
// the router's own code), answers 401 for invalid credentials, and signs the principal into the header every
// subgraph fetch of that request carries. A context header sent by the client is never passed on.
import crypto from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { INTERNAL_CONTEXT_HEADER, signContext, type Principal } from '../../platform/auth.ts';
import { shapeError } from '../../platform/errors.ts';
import { authenticate, credentialsOf } from '../../router/authenticate.ts';
import type { CredentialCache } from '../../router/credential-cache.ts';
import { remoteSubgraph } from '../../router/remote-subgraph.ts';

export type TesseraAuthOptions = {
  /** TESSERA_INTERNAL_SECRET, the same as the subgraphs'. */
  secret: string;
  /** Routing URL of each subgraph (tenant and identity are asked about credentials). */
  subgraphUrls: Map<string, string>;
  /** Remembers API keys and tenant tokens until revoked (router/credential-cache.ts), when given. */
  cache?: CredentialCache;
};

type Authenticated = { signed: string } | { error: Response };

/** The plugin and the header function the gateway's `propagateHeaders.fromClientToSubgraphs` must use. */
export function tesseraAuth(opts: TesseraAuthOptions): { plugin: GatewayPlugin; subgraphHeaders: (payload: { request: Request }) => Promise<Record<string, string>> } {
  const handles = new Map([...opts.subgraphUrls].map(([name, url]) => [name, remoteSubgraph(name, url, opts.secret)]));
  const byRequest = new WeakMap<Request, Promise<Authenticated>>();

  const authenticateRequest = async (request: Request): Promise<Authenticated> => {
    const given = request.headers.get('x-request-id');
    const requestId = given && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : crypto.randomUUID();
    let principal: Principal;
    try {
      principal = await authenticate(credentialsOf(Object.fromEntries(request.headers)), handles, requestId, opts.cache);
    } catch (err) {
      const shaped = shapeError(err);
      const body = { errors: [{ message: shaped.message, extensions: { code: shaped.code, http: { status: shaped.status } } }] };
      return { error: new Response(JSON.stringify(body), { status: shaped.status, headers: { 'content-type': 'application/json', 'x-request-id': requestId } }) };
    }
    const ip = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim();
    return { signed: await signContext({ requestId, principal, ...(ip ? { ip } : {}) }, opts.secret) };
  };

  const authenticated = (request: Request): Promise<Authenticated> => {
    let found = byRequest.get(request);
    if (!found) byRequest.set(request, (found = authenticateRequest(request)));
    return found;
  };

  const plugin: GatewayPlugin = {
    async onRequest({ request, url, endResponse }) {
      if (!url.pathname.endsWith('/graphql')) return;
      const result = await authenticated(request);
      if ('error' in result) endResponse(result.error);
    },
  };

  const subgraphHeaders = async ({ request }: { request: Request }): Promise<Record<string, string>> => {
    const result = await authenticated(request);
    // Only reached for authenticated requests (onRequest ended the others); the header replaces anything the client sent.
    return 'signed' in result ? { [INTERNAL_CONTEXT_HEADER]: result.signed } : {};
  };

  return { plugin, subgraphHeaders };
}
