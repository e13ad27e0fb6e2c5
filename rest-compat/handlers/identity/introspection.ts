// Token introspection (RFC 7662) and revocation (RFC 7009): one operation each, the client authenticated by the
// identity subgraph.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_OPERATIONS } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import {
  callOAuth,
  clientCredentialsOf,
  form,
  json,
  noStore,
  oauthErrorResponse,
  op,
  paramsOf,
  type EndpointGroup,
} from './oauth.ts';

async function introspect(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  const i = (
    await callOAuth(deps, req, INTERNAL_OPERATIONS.introspect, { token: params.get('token') ?? '', credentials })
  )._introspectToken;
  if (!i.active) return noStore(reply).send({ active: false });
  const body: Record<string, unknown> = {
    active: true,
    scope: i.scope,
    client_id: i.clientId,
    username: i.username,
    token_type: i.tokenType,
    exp: i.exp,
    iat: i.iat,
    sub: i.sub,
    aud: i.aud,
    iss: i.iss,
    jti: i.jti,
    project_id: i.projectId,
    sid: i.sid,
  };
  for (const k of Object.keys(body)) if (body[k] === null || body[k] === undefined) delete body[k];
  return noStore(reply).send(body);
}

async function revocation(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  await callOAuth(deps, req, INTERNAL_OPERATIONS.revoke, { token: params.get('token') ?? '', credentials });
  return noStore(reply).code(200).send();
}

export const introspection: EndpointGroup = {
  register(scope, deps) {
    scope.post('/introspect', (req, reply) => introspect(deps, req, reply));
    scope.post('/revocation', (req, reply) => revocation(deps, req, reply));
  },
  openapi: {
    '/introspect': {
      post: op('identity.introspect', 'Inspect a token (RFC 7662)', {
        description:
          "Whether a token of the client's project is active (not expired, revoked or signed out) and its claims. The client authenticates (client_secret_basic or client_secret_post).",
        requestBody: form({ token: 'The token', token_type_hint: 'access_token or refresh_token' }, ['token']),
        responses: { 200: json('`{active, ...}`'), 400: oauthErrorResponse, 401: oauthErrorResponse },
      }),
    },
    '/revocation': {
      post: op('identity.revocation', 'Revoke a token (RFC 7009)', {
        description:
          'Revokes an access or refresh token of the client (a refresh token revokes its whole family). The client authenticates; an unknown token answers 200 too.',
        requestBody: form({ token: 'The token', token_type_hint: 'access_token or refresh_token' }, ['token']),
        responses: {
          200: { description: 'Revoked (also for unknown tokens)' },
          400: oauthErrorResponse,
          401: oauthErrorResponse,
        },
      }),
    },
  },
};
