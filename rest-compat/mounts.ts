// Subgraph HTTP endpoints beside GraphQL (platform/subgraph.ts SubgraphHttp), mounted on the public
// address at their prefix. The front door authenticates; the endpoint gets a WHATWG Request and the
// verified context, and may stream its answer (server-sent events). WebSockets at the prefix are
// accepted when the endpoint serves them: in one-process mode the subgraph's own socket server, in split
// mode a forwarder to the subgraph's process (platform/http-bridge.ts remoteSubgraphHttp).
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal, RequestContext } from '../platform/auth.ts';
import type { SubgraphHttp } from '../platform/subgraph.ts';
import { callerWebSocketServer, sendWebResponse, toWebRequest } from '../platform/http-bridge.ts';
import { upgradeRequestId } from '../platform/http-edge.ts';
import { logUpgrade } from '../platform/http-observe.ts';
import type { Router } from '../router/router.ts';
import { AppError } from '../platform/errors.ts';
import { authenticate, credentialsOf } from '../router/authenticate.ts';

/** A subgraph endpoint and where it is mounted. */
export type HttpMount = SubgraphHttp & { prefix: string };

/** Mounts one subgraph endpoint at its prefix. */
export function mountSubgraphHttp(
  app: FastifyInstance,
  mount: HttpMount,
  contextOf: (req: FastifyRequest) => Promise<RequestContext>,
  router: Router,
  /** Refuses (throws) a browser's socket from an origin the credential's project does not allow (rest-compat/cors.ts). */
  checkSocketOrigin: (request: IncomingMessage, principal: Principal) => Promise<void>,
): void {
  for (const url of [mount.prefix, `${mount.prefix}/*`]) {
    app.route({
      method: ['GET', 'POST'],
      url,
      handler: async (req, reply) => {
        const ctx = await contextOf(req);
        const response = await mount.fetch(toWebRequest(req, reply), ctx);
        // graphql-yoga refuses a content type or an Accept it cannot serve with an empty body: answer in the
        // documented error shape instead, saying what to send.
        if (response.status >= 400 && !response.headers.get('content-type')) {
          await response.body?.cancel().catch(() => {});
          if (response.status === 406)
            throw new AppError(
              'NOT_ACCEPTABLE',
              `${req.headers.accept ?? '(none)'} cannot be answered: accept application/json or text/event-stream`,
              { accepted: ['application/json', 'text/event-stream'] },
            );
          if (response.status === 415)
            throw new AppError(
              'UNSUPPORTED_MEDIA_TYPE',
              `Unsupported content type ${String(req.headers['content-type'] ?? '(none)').split(';')[0]}: send a GraphQL request as JSON (Content-Type: application/json), or GET with ?query=`,
              { expected: 'application/json' },
            );
          throw new AppError(
            response.status < 500 ? 'BAD_REQUEST' : 'INTERNAL',
            `The endpoint answered ${response.status}`,
          );
        }
        return sendWebResponse(reply, response);
      },
    });
  }
  if (!mount.websocket) return;
  const wss = callerWebSocketServer();
  mount.websocket(wss, async (params, request) => {
    const header = (name: string) => {
      const v =
        params[name] ??
        params[name.toLowerCase()] ??
        Object.entries(params).find(([k]) => k.toLowerCase() === name)?.[1];
      return typeof v === 'string' ? v : undefined;
    };
    // The upgrade's own id (the caller's X-Request-Id when sane): the access line's, and the forwarded hop's.
    const requestId = upgradeRequestId(request);
    const principal = await authenticate(
      credentialsOf({ 'x-api-key': header('x-api-key'), authorization: header('authorization') }),
      router.handles,
      requestId,
      router.credentials,
    );
    // A refusal closes the socket 4403, as a bad credential does: a page cannot use a publishable key from an origin
    // the project did not list, over a socket any more than over HTTP.
    await checkSocketOrigin(request, principal);
    return { requestId, principal };
  });
  app.server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== mount.prefix && !path?.startsWith(`${mount.prefix}/`)) return;
    upgradeRequestId(req);
    wss.handleUpgrade(req, socket, head, (ws) => {
      logUpgrade(app, req, { route: mount.prefix, status: 101 });
      wss.emit('connection', ws, req);
    });
  });
  app.addHook('onClose', async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(() => r(undefined)));
  });
}
