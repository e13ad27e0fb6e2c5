// The token endpoint (RFC 6749 §3.2): every grant in one operation of the identity subgraph, which authenticates
// the client itself (client_secret_basic, client_secret_post, or a public client's client_id alone).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_OPERATIONS } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import {
  OAuthFailure,
  callOAuth,
  clientCredentialsOf,
  lookupClient,
  form,
  json,
  noStore,
  oauthErrorResponse,
  op,
  paramsOf,
  type EndpointGroup,
} from './oauth.ts';

async function token(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  // No tokens for a project the operator suspended (those issued before are refused where they are used).
  const client = await lookupClient(deps, req, credentials.clientId);
  if (client)
    await deps.checkProject(client.projectId).catch((err: unknown) => {
      throw new OAuthFailure(403, 'unauthorized_client', (err as Error).message);
    });
  // A missing grant_type is answered after the client is authenticated (by the identity subgraph).
  const grant = {
    grantType: params.get('grant_type') ?? '',
    username: params.get('username'),
    password: params.get('password'),
    totpCode: params.get('totp_code'),
    scope: params.get('scope'),
    code: params.get('code'),
    redirectUri: params.get('redirect_uri'),
    codeVerifier: params.get('code_verifier'),
    refreshToken: params.get('refresh_token'),
  };
  const t = (await callOAuth(deps, req, INTERNAL_OPERATIONS.issueTokens, { credentials, grant }))._issueTokens;
  const body: Record<string, unknown> = {
    access_token: t.accessToken,
    token_type: t.tokenType,
    expires_in: t.expiresIn,
    scope: t.scope,
  };
  if (t.refreshToken) body.refresh_token = t.refreshToken;
  if (t.idToken) body.id_token = t.idToken;
  return noStore(reply).send(body);
}

export const tokenEndpoint: EndpointGroup = {
  register(scope, deps) {
    scope.post('/token', (req, reply) => token(deps, req, reply));
  },
  openapi: {
    '/token': {
      post: op('identity.token', 'Issue tokens', {
        description:
          "grant_type password (username, password, totp_code, scope), authorization_code (code, redirect_uri, code_verifier), client_credentials (scope), refresh_token (refresh_token, scope). Client authentication client_secret_basic or client_secret_post (public clients: client_id alone). 403 `unauthorized_client` while the client's project is suspended by the operator.",
        requestBody: form(
          {
            grant_type: 'Grant type',
            client_id: 'client_secret_post',
            client_secret: 'client_secret_post',
            username: '',
            password: '',
            totp_code: '',
            scope: '',
            code: '',
            redirect_uri: '',
            code_verifier: '',
            refresh_token: '',
          },
          ['grant_type'],
        ),
        responses: {
          200: json('`{access_token, token_type, expires_in, scope, refresh_token?, id_token?}`'),
          400: oauthErrorResponse,
          401: oauthErrorResponse,
          403: oauthErrorResponse,
          429: oauthErrorResponse,
          500: oauthErrorResponse,
          503: oauthErrorResponse,
        },
      }),
    },
  },
};
