// The authorization endpoint (RFC 6749 §4.1) with its hosted sign-in page: GET checks the request and shows the
// page, POST signs the user in and sends the code back to the client's registered redirect URI.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_OPERATIONS, callInternal, isAnswerError } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import {
  OAuthFailure,
  callOAuth,
  form,
  internalContext,
  lookupClient,
  noStore,
  oauthFailureOf,
  op,
  strictParams,
  type ClientFacts,
  type EndpointGroup,
  html,
  htmlOrOAuthError,
  redirect,
  type Params,
} from './oauth.ts';
import { errorPage, signInPage } from './pages.ts';
import { brandingOf } from './branding.ts';

/** The parameters of an authorization request, from the query (GET) or the hosted page's form (POST). */
const REQUEST_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
];

/** Where errors and codes go back to: the registered redirect URI, with `iss` (RFC 9207) and `state`. */
export function redirectTo(
  reply: FastifyReply,
  deps: RawHandlerDeps,
  redirectUri: string,
  state: string | undefined,
  values: Record<string, string>,
): FastifyReply {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) url.searchParams.set(k, v);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', deps.config.issuer);
  return noStore(reply).redirect(url.toString(), 302);
}

export type CheckedRequest = {
  client: ClientFacts;
  redirectUri: string;
  state?: string;
  request: Record<string, string | undefined>;
  input: Record<string, unknown>;
};

/**
 * Step 1 of /authorize (RFC 6749 §4.1.2.1): an unknown client or an unregistered redirect URI is shown
 * on a page, never redirected to; everything else is checked by the identity domain and sent back to
 * the client as `error=...`. Returns null when the answer has been sent.
 */
export async function checkAuthorizationRequest(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  params: Params,
): Promise<CheckedRequest | null> {
  let clientId: string | undefined;
  let redirectUri: string | undefined;
  try {
    clientId = params.get('client_id');
    redirectUri = params.get('redirect_uri');
  } catch {
    clientId = undefined;
  }
  if (!clientId) {
    errorPage(reply, 400, 'The request has no client_id.');
    return null;
  }
  const found = await lookupClient(deps, req, clientId);
  if (!found) {
    errorPage(reply, 400, 'The client_id is unknown.');
    return null;
  }
  try {
    await deps.checkProject(found.projectId);
  } catch {
    errorPage(reply, 403, 'This application is suspended by the operator of this install.');
    return null;
  }
  if (!redirectUri || !found.redirectUris.includes(redirectUri)) {
    errorPage(reply, 400, 'The redirect_uri is missing or not registered for this client (it must match exactly).');
    return null;
  }
  const client: ClientFacts = {
    clientId: found.clientId,
    projectId: found.projectId,
    tenantId: found.tenantId,
    grantTypes: found.grantTypes,
    redirectUris: found.redirectUris,
    public: found.public,
    allowedScopes: found.allowedScopes,
  };
  const state = params.get('state');
  const request = Object.fromEntries(REQUEST_PARAMS.map((n) => [n, params.get(n)]));
  const fail = (error: string, description: string) => {
    redirectTo(reply, deps, redirectUri, state, { error, error_description: description });
    return null;
  };
  const responseType = params.get('response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');
  const input = {
    redirectUri,
    scope: params.get('scope') ?? null,
    nonce: params.get('nonce') ?? null,
    codeChallenge: params.get('code_challenge') ?? null,
    codeChallengeMethod: params.get('code_challenge_method') ?? null,
  };
  try {
    await callOAuth(deps, req, INTERNAL_OPERATIONS.checkAuthorization, { client, input });
  } catch (err) {
    if (err instanceof OAuthFailure)
      return fail(
        err.error === 'unauthorized_client' || err.error === 'invalid_scope'
          ? err.error
          : err.status >= 500
            ? 'server_error'
            : 'invalid_request',
        err.message,
      );
    throw err;
  }
  const prompt = params.get('prompt');
  if (prompt === 'none') return fail('login_required', 'The provider keeps no browser session: the user must sign in');
  return { client, redirectUri, state, request, input };
}

async function authorizeGet(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.query);
  const checked = await checkAuthorizationRequest(deps, req, reply, params);
  if (!checked) return reply;
  if (repeated)
    return redirectTo(reply, deps, checked.redirectUri, checked.state, {
      error: 'invalid_request',
      error_description: `Parameter ${repeated} is repeated`,
    });
  return signInPage(reply, { request: checked.request, brand: await brandingOf(deps, req, checked.client.projectId) });
}

async function authorizePost(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.body);
  const checked = await checkAuthorizationRequest(deps, req, reply, params);
  if (!checked) return reply;
  const back = (values: Record<string, string>) => redirectTo(reply, deps, checked.redirectUri, checked.state, values);
  if (repeated) return back({ error: 'invalid_request', error_description: `Parameter ${repeated} is repeated` });
  if (params.get('action') === 'cancel')
    return back({ error: 'access_denied', error_description: 'The user cancelled the sign-in' });
  const email = params.get('email');
  const again = async (status: number, error: string, askTotp = false) =>
    signInPage(reply, {
      status,
      request: checked.request,
      email,
      error,
      askTotp,
      brand: await brandingOf(deps, req, checked.client.projectId),
    });
  if (!email || !params.get('password')) return again(400, 'Enter your e-mail address and password.');
  const input = {
    ...checked.input,
    email,
    password: params.get('password'),
    totpCode: params.get('totp_code') ?? null,
  };
  let code: string;
  try {
    code = (
      await callInternal(deps, INTERNAL_OPERATIONS.authorize, { client: checked.client, input }, internalContext(req))
    )._authorize.code;
  } catch (e) {
    if (!isAnswerError(e)) throw e;
    switch (e.code) {
      case 'INVALID_CREDENTIALS':
        return again(401, 'The e-mail address or password is wrong.');
      case 'MFA_REQUIRED':
        return again(401, 'Enter the code from your authenticator app.', true);
      case 'INVALID_MFA_CODE':
        return again(401, 'The authentication code is wrong or was already used.', true);
      case 'RATE_LIMITED': {
        const retry = (e.details as { retry_after?: number } | undefined)?.retry_after ?? 60;
        void reply.header('retry-after', String(retry));
        return again(429, `Too many attempts. Try again in ${retry} seconds.`);
      }
      case 'VALIDATION_FAILED':
        return again(400, e.message);
      default: {
        const failure = oauthFailureOf(e, req.log);
        return back({
          error: failure.status >= 500 ? 'server_error' : failure.error,
          error_description: failure.message,
        });
      }
    }
  }
  return back({ code });
}

export const authorize: EndpointGroup = {
  register(scope, deps) {
    scope.get('/authorize', (req, reply) => authorizeGet(deps, req, reply));
    scope.post('/authorize', (req, reply) => authorizePost(deps, req, reply));
  },
  openapi: {
    '/authorize': {
      get: op('identity.authorize', 'Authorization request: shows the hosted sign-in page', {
        description:
          'response_type=code, client_id, redirect_uri (exact match), scope, state, nonce, code_challenge + code_challenge_method=S256 (required for public clients), prompt.',
        responses: {
          200: html('HTML sign-in form'),
          302: redirect('Back to redirect_uri with error (RFC 6749 §4.1.2.1)'),
          400: html('HTML page: unknown client or unregistered redirect_uri'),
        },
      }),
      post: op('identity.authorize.submit', 'Sign-in form submission', {
        description:
          "The hosted sign-in form's POST (the authorization request's parameters ride along as hidden fields): a right password (and TOTP code when MFA is on) finishes the authorization with a redirect; otherwise the form comes back with the problem.",
        requestBody: form({
          email: 'E-mail',
          password: 'Password',
          totp_code: 'TOTP code (MFA)',
          action: '`sign_in` or `cancel`',
        }),
        responses: {
          302: redirect('Back to redirect_uri with code, state and iss'),
          400: htmlOrOAuthError('The form again, or a page: unknown client or unregistered redirect_uri'),
          401: html('The form again, with the problem'),
          429: html('The form again: too many attempts (`Retry-After`)'),
        },
      }),
    },
  },
};
