// The UserInfo endpoint (OIDC Core §5.3): the signed-in end-user's claims, for an access token granted `openid`.
// A protected resource: its errors are RFC 6750's (WWW-Authenticate), not RFC 6749's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.ts';
import { INTERNAL_OPERATIONS, callInternal, isAnswerError } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import { json, noStore, op, type EndpointGroup } from './oauth.ts';

/** RFC 6750 errors of a protected resource (userinfo). */
function bearerError(
  reply: FastifyReply,
  status: number,
  error: string | undefined,
  description: string,
): FastifyReply {
  const challenge = error
    ? `Bearer realm="tessera", error="${error}", error_description="${description.replace(/"/g, "'")}"`
    : 'Bearer realm="tessera"';
  return noStore(reply)
    .code(status)
    .header('www-authenticate', challenge)
    .send({ error: error ?? 'invalid_request', error_description: description });
}

async function userinfo(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (!req.headers.authorization)
    return bearerError(reply, 401, undefined, 'An end-user access token is required (Authorization: Bearer)');
  let ctx;
  try {
    ctx = await deps.contextOf(req);
  } catch (err) {
    if (err instanceof AppError && err.status === 401)
      return bearerError(reply, 401, 'invalid_token', 'The access token is invalid, expired or revoked');
    throw err;
  }
  if (ctx.principal.kind !== 'user') return bearerError(reply, 401, 'invalid_token', 'Not an end-user access token');
  if (!ctx.principal.scopes.includes('openid'))
    return bearerError(reply, 403, 'insufficient_scope', 'The token was not granted the openid scope');
  let claims: Record<string, unknown>;
  try {
    claims = (await callInternal(deps, INTERNAL_OPERATIONS.userInfo, {}, ctx)).userInfo;
  } catch (err) {
    if (isAnswerError(err) && err.code === 'INVALID_TOKEN')
      return bearerError(reply, 401, 'invalid_token', err.message);
    return deps.sendError(reply, err);
  }
  for (const k of Object.keys(claims)) if (claims[k] === null) delete claims[k];
  return noStore(reply).send(claims);
}

const BEARER = { security: [{ bearerAuth: [] }] };

export const userinfoEndpoint: EndpointGroup = {
  register(scope, deps) {
    scope.route({ method: ['GET', 'POST'], url: '/userinfo', handler: (req, reply) => userinfo(deps, req, reply) });
  },
  openapi: {
    '/userinfo': {
      get: op('identity.userinfo', 'Current user profile (OIDC claims)', {
        description:
          'The claims of the end-user an access token from /token was issued to, as its scopes allow (openid, profile, email, roles).',
        ...BEARER,
        responses: { 200: json('Claims'), 401: json('RFC 6750 error') },
      }),
      post: op('identity.userinfo.post', 'Current user profile (OIDC claims)', {
        description: 'The same as GET /userinfo, for clients that POST (OIDC Core 5.3.1).',
        ...BEARER,
        responses: { 200: json('Claims'), 401: json('RFC 6750 error') },
      }),
    },
  },
};
