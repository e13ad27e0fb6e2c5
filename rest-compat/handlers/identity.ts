// The identity provider's wire endpoints (OIDC discovery, JWKS, /authorize with its hosted sign-in page,
// /token, /userinfo, /introspect, /revocation, RP-initiated /logout, and the pages behind the links of
// reset and verification mails). They speak the OAuth/OIDC formats (form bodies, RFC 6749 errors) and
// reach the identity and tenant domains only through GraphQL operations. The JSON endpoints of end-users
// (/register, /mfa/*, /password/change, ...) are rows of rest-compat/routes/identity.ts.
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../platform/errors.ts';
import type { RawHandlerDeps, RawHandlerModule } from './types.ts';
import {
  OAuthFailure, clientCredentialsOf, internalContext, invalidRequest, lookupClient, oauthFailureOf, paramsOf, sendOAuthError,
  type ClientFacts, type Params,
} from './identity/oauth.ts';
import { errorPage, resetPasswordPage, signInPage, signedOutPage, verifyEmailPage } from './identity/pages.ts';

const TAG = 'Identity provider';

export const SCOPES_SUPPORTED = ['openid', 'profile', 'email', 'phone', 'offline_access'];
export const CLAIMS_SUPPORTED = [
  'sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', 'amr', 'name', 'given_name', 'family_name', 'middle_name', 'nickname',
  'preferred_username', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at', 'email', 'email_verified', 'phone_number',
];
const GRANT_TYPES = ['authorization_code', 'password', 'client_credentials', 'refresh_token'];

// The token, introspection and revocation endpoints hand the client's credentials to the identity
// subgraph, which authenticates the client itself (with a cache of what the tenant subgraph vouched for):
// one operation per request.
const ISSUE_TOKENS = `mutation IdentityIssueTokens($credentials: ClientCredentialsInput!, $grant: TokenGrantInput!) {
  _issueTokens(credentials: $credentials, grant: $grant) { accessToken tokenType expiresIn refreshToken idToken scope }
}`;
const CHECK_AUTHORIZATION = `query IdentityCheckAuthorization($client: OidcClientFactsInput!, $input: AuthorizeInput!) {
  _checkAuthorizationRequest(client: $client, input: $input)
}`;
const AUTHORIZE = `mutation IdentityAuthorize($client: OidcClientFactsInput!, $input: AuthorizeInput!) { _authorize(client: $client, input: $input) { code } }`;
const INTROSPECT = `query IdentityIntrospect($token: String!, $credentials: ClientCredentialsInput!) {
  _introspectToken(token: $token, credentials: $credentials) { active scope clientId username tokenType exp iat sub aud iss jti projectId sid }
}`;
const REVOKE = 'mutation IdentityRevoke($token: String!, $credentials: ClientCredentialsInput!) { _revokeToken(token: $token, credentials: $credentials) }';
const END_SESSION = 'mutation IdentityEndSession($idTokenHint: String!) { _endSession(idTokenHint: $idTokenHint) { clientId revoked } }';
const JWKS = 'query IdentityJwks { identitySigningKeys { kid kty alg use crv x y } }';
const USERINFO = `query IdentityUserInfo { userInfo {
  sub name given_name: givenName family_name: familyName middle_name: middleName nickname preferred_username: preferredUsername
  picture website gender birthdate zoneinfo locale updated_at: updatedAt email email_verified: emailVerified phone_number: phoneNumber
} }`;
const RESET_CONFIRM = 'mutation IdentityResetConfirm($input: ConfirmEndUserPasswordResetInput!) { confirmEndUserPasswordReset(input: $input) }';
const VERIFY_CONFIRM = 'mutation IdentityVerifyConfirm($token: String!) { confirmEndUserEmailVerification(token: $token) }';

/** The discovery document (OIDC Discovery 1.0 + RFC 8414); every endpoint listed exists. */
export function discoveryDocument(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/jwks.json`,
    registration_endpoint: `${issuer}/register`,
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revocation`,
    end_session_endpoint: `${issuer}/logout`,
    scopes_supported: SCOPES_SUPPORTED,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANT_TYPES,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    claims_supported: CLAIMS_SUPPORTED,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    prompt_values_supported: ['none', 'login'],
  };
}

/** Runs an identity operation; a GraphQL error becomes the matching protocol error. */
async function run<T>(deps: RawHandlerDeps, req: FastifyRequest, query: string, variables: Record<string, unknown>): Promise<T> {
  const result = await deps.execute(query, variables, internalContext(req));
  if (result.errors?.length) throw oauthFailureOf(result.errors[0]!, req.log);
  return result.data as T;
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

async function token(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  // A missing grant_type is answered after the client is authenticated (by the identity subgraph).
  const grant = {
    grantType: params.get('grant_type') ?? '', username: params.get('username'), password: params.get('password'), totpCode: params.get('totp_code'), scope: params.get('scope'),
    code: params.get('code'), redirectUri: params.get('redirect_uri'), codeVerifier: params.get('code_verifier'), refreshToken: params.get('refresh_token'),
  };
  const data = await run<{ _issueTokens: Record<string, unknown> }>(deps, req, ISSUE_TOKENS, { credentials, grant });
  const t = data._issueTokens;
  const body: Record<string, unknown> = { access_token: t.accessToken, token_type: t.tokenType, expires_in: t.expiresIn, scope: t.scope };
  if (t.refreshToken) body.refresh_token = t.refreshToken;
  if (t.idToken) body.id_token = t.idToken;
  return noStore(reply).send(body);
}

async function introspect(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  const data = await run<{ _introspectToken: Record<string, unknown> }>(deps, req, INTROSPECT, { token: params.get('token') ?? '', credentials });
  const i = data._introspectToken;
  if (!i.active) return noStore(reply).send({ active: false });
  const body: Record<string, unknown> = {
    active: true, scope: i.scope, client_id: i.clientId, username: i.username, token_type: i.tokenType, exp: i.exp, iat: i.iat, sub: i.sub, aud: i.aud,
    iss: i.iss, jti: i.jti, project_id: i.projectId, sid: i.sid,
  };
  for (const k of Object.keys(body)) if (body[k] === null || body[k] === undefined) delete body[k];
  return noStore(reply).send(body);
}

async function revocation(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const params = paramsOf(req.body);
  const credentials = clientCredentialsOf(req, params);
  await run(deps, req, REVOKE, { token: params.get('token') ?? '', credentials });
  return noStore(reply).code(200).send();
}

/** RFC 6750 errors of a protected resource (userinfo). */
function bearerError(reply: FastifyReply, status: number, error: string | undefined, description: string): FastifyReply {
  const challenge = error ? `Bearer realm="tessera", error="${error}", error_description="${description.replace(/"/g, "'")}"` : 'Bearer realm="tessera"';
  return noStore(reply).code(status).header('www-authenticate', challenge).send({ error: error ?? 'invalid_request', error_description: description });
}

async function userinfo(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (!req.headers.authorization) return bearerError(reply, 401, undefined, 'An end-user access token is required (Authorization: Bearer)');
  let ctx;
  try {
    ctx = await deps.contextOf(req);
  } catch (err) {
    if (err instanceof AppError && err.status === 401) return bearerError(reply, 401, 'invalid_token', 'The access token is invalid, expired or revoked');
    throw err;
  }
  if (ctx.principal.kind !== 'user') return bearerError(reply, 401, 'invalid_token', 'Not an end-user access token');
  if (!ctx.principal.scopes.includes('openid')) return bearerError(reply, 403, 'insufficient_scope', 'The token was not granted the openid scope');
  const result = await deps.execute(USERINFO, {}, ctx);
  if (result.errors?.length) {
    const code = result.errors[0]!.extensions?.code;
    if (code === 'INVALID_TOKEN') return bearerError(reply, 401, 'invalid_token', result.errors[0]!.message);
    return deps.sendGraphQLErrors(reply, result.errors);
  }
  const claims = (result.data as { userInfo: Record<string, unknown> }).userInfo;
  for (const k of Object.keys(claims)) if (claims[k] === null) delete claims[k];
  return noStore(reply).send(claims);
}

/** The parameters of an authorization request, from the query (GET) or the hosted page's form (POST). */
const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'prompt'];

/** Where errors and codes go back to: the registered redirect URI, with `iss` (RFC 9207) and `state`. */
function redirectTo(reply: FastifyReply, deps: RawHandlerDeps, redirectUri: string, state: string | undefined, values: Record<string, string>): FastifyReply {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) url.searchParams.set(k, v);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', deps.config.issuer);
  return noStore(reply).redirect(url.toString(), 302);
}

type CheckedRequest = { client: ClientFacts; redirectUri: string; state?: string; request: Record<string, string | undefined>; input: Record<string, unknown> };

/**
 * Step 1 of /authorize (RFC 6749 §4.1.2.1): an unknown client or an unregistered redirect URI is shown
 * on a page, never redirected to; everything else is checked by the identity domain and sent back to
 * the client as `error=...`. Returns null when the answer has been sent.
 */
async function checkAuthorizationRequest(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply, params: Params): Promise<CheckedRequest | null> {
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
  if (!redirectUri || !found.redirectUris.includes(redirectUri)) {
    errorPage(reply, 400, 'The redirect_uri is missing or not registered for this client (it must match exactly).');
    return null;
  }
  const client: ClientFacts = {
    clientId: found.clientId, projectId: found.projectId, tenantId: found.tenantId, grantTypes: found.grantTypes, redirectUris: found.redirectUris, public: found.public,
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
    redirectUri, scope: params.get('scope') ?? null, nonce: params.get('nonce') ?? null,
    codeChallenge: params.get('code_challenge') ?? null, codeChallengeMethod: params.get('code_challenge_method') ?? null,
  };
  try {
    await run(deps, req, CHECK_AUTHORIZATION, { client, input });
  } catch (err) {
    if (err instanceof OAuthFailure) return fail(err.error === 'unauthorized_client' || err.error === 'invalid_scope' ? err.error : err.status >= 500 ? 'server_error' : 'invalid_request', err.message);
    throw err;
  }
  const prompt = params.get('prompt');
  if (prompt === 'none') return fail('login_required', 'The provider keeps no browser session: the user must sign in');
  return { client, redirectUri, state, request, input };
}

/** Any parameter given twice makes the whole request invalid (RFC 6749 §3.1). */
function strictParams(source: unknown): { params: Params; repeated?: string } {
  const record = (source && typeof source === 'object' ? source : {}) as Record<string, unknown>;
  const repeated = Object.keys(record).find((k) => Array.isArray(record[k]));
  const cleaned = Object.fromEntries(Object.entries(record).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : v]));
  return { params: paramsOf(cleaned), repeated };
}

async function authorizeGet(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.query);
  const checked = await checkAuthorizationRequest(deps, req, reply, params);
  if (!checked) return reply;
  if (repeated) return redirectTo(reply, deps, checked.redirectUri, checked.state, { error: 'invalid_request', error_description: `Parameter ${repeated} is repeated` });
  return signInPage(reply, { request: checked.request });
}

async function authorizePost(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.body);
  const checked = await checkAuthorizationRequest(deps, req, reply, params);
  if (!checked) return reply;
  const back = (values: Record<string, string>) => redirectTo(reply, deps, checked.redirectUri, checked.state, values);
  if (repeated) return back({ error: 'invalid_request', error_description: `Parameter ${repeated} is repeated` });
  if (params.get('action') === 'cancel') return back({ error: 'access_denied', error_description: 'The user cancelled the sign-in' });
  const email = params.get('email');
  const again = (status: number, error: string, askTotp = false) => signInPage(reply, { status, request: checked.request, email, error, askTotp });
  if (!email || !params.get('password')) return again(400, 'Enter your e-mail address and password.');
  const input = { ...checked.input, email, password: params.get('password'), totpCode: params.get('totp_code') ?? null };
  const result = await deps.execute(AUTHORIZE, { client: checked.client, input }, internalContext(req));
  const e = result.errors?.[0];
  if (!e) return back({ code: (result.data as { _authorize: { code: string } })._authorize.code });
  switch (e.extensions?.code) {
    case 'INVALID_CREDENTIALS':
      return again(401, 'The e-mail address or password is wrong.');
    case 'MFA_REQUIRED':
      return again(401, 'Enter the code from your authenticator app.', true);
    case 'INVALID_MFA_CODE':
      return again(401, 'The authentication code is wrong or was already used.', true);
    case 'RATE_LIMITED': {
      const retry = (e.extensions?.details as { retry_after?: number } | undefined)?.retry_after ?? 60;
      void reply.header('retry-after', String(retry));
      return again(429, `Too many attempts. Try again in ${retry} seconds.`);
    }
    case 'VALIDATION_FAILED':
      return again(400, e.message);
    default: {
      const failure = oauthFailureOf(e, req.log);
      return back({ error: failure.status >= 500 ? 'server_error' : failure.error, error_description: failure.message });
    }
  }
}

/** RP-initiated logout (the discovery's end_session_endpoint): revokes the session of id_token_hint. */
async function endSession(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.query);
  if (repeated) return errorPage(reply, 400, `Parameter ${repeated} is repeated.`);
  const hint = params.get('id_token_hint');
  const postLogout = params.get('post_logout_redirect_uri');
  let clientId = params.get('client_id');
  if (hint) {
    try {
      const data = await run<{ _endSession: { clientId: string } }>(deps, req, END_SESSION, { idTokenHint: hint });
      if (clientId && clientId !== data._endSession.clientId) return errorPage(reply, 400, 'client_id does not match id_token_hint.');
      clientId = data._endSession.clientId;
    } catch (err) {
      if (err instanceof OAuthFailure && err.status < 500) return errorPage(reply, 400, err.message);
      throw err;
    }
  }
  if (!postLogout) return signedOutPage(reply);
  const client = clientId ? await lookupClient(deps, req, clientId) : null;
  // Only back to a URI registered for the client (its redirect URIs), never to an arbitrary address.
  if (!client || !client.redirectUris.includes(postLogout)) return errorPage(reply, 400, 'post_logout_redirect_uri is not registered for this client.');
  const url = new URL(postLogout);
  const state = params.get('state');
  if (state) url.searchParams.set('state', state);
  return noStore(reply).redirect(url.toString(), 302);
}

const wantsHtml = (req: FastifyRequest) => /application\/x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? ''));

/** The reset link's page (GET) and the reset itself (POST: JSON answers JSON, the page's form answers HTML). */
async function resetConfirm(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (req.method === 'GET') {
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || !token) return errorPage(reply, 400, 'The link has no token.');
    return resetPasswordPage(reply, token);
  }
  const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const html = wantsHtml(req);
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) return deps.sendError(reply, new AppError('BAD_REQUEST', 'The request body must be a JSON object {token, new_password}'));
  const result = await deps.execute(RESET_CONFIRM, { input: { token: body.token, newPassword: body.new_password } }, { requestId: String(req.id), principal: { kind: 'anonymous' }, ip: req.ip });
  if (!html) return result.errors?.length ? deps.sendGraphQLErrors(reply, result.errors) : reply.code(204).send();
  if (!result.errors?.length) return resetPasswordPage(reply, '', { done: true });
  return resetPasswordPage(reply, typeof body.token === 'string' ? body.token : '', { error: result.errors[0]!.message }, 400);
}

async function verifyConfirm(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (req.method === 'GET') {
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || !token) return errorPage(reply, 400, 'The link has no token.');
    return verifyEmailPage(reply, token);
  }
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) return deps.sendError(reply, new AppError('BAD_REQUEST', 'The request body must be a JSON object {token}'));
  const body = req.body as Record<string, unknown>;
  const result = await deps.execute(VERIFY_CONFIRM, { token: body.token }, { requestId: String(req.id), principal: { kind: 'anonymous' }, ip: req.ip });
  if (!wantsHtml(req)) return result.errors?.length ? deps.sendGraphQLErrors(reply, result.errors) : reply.send({ email_verified: true });
  if (!result.errors?.length) return verifyEmailPage(reply, '', { done: true });
  return verifyEmailPage(reply, typeof body.token === 'string' ? body.token : '', { error: result.errors[0]!.message }, 400);
}

/** Registers the endpoints in their own scope (form bodies are parsed here only). */
async function register(app: FastifyInstance, deps: RawHandlerDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    // Protocol endpoints answer protocol errors, also for bodies Fastify refuses (wrong type, too big).
    scope.setErrorHandler((err, req, reply) => {
      if (err instanceof OAuthFailure) return sendOAuthError(reply, err);
      const e = err as Error & { statusCode?: number };
      const oauthPath = /^\/(token|introspect|revocation)\b/.test(req.url);
      // Input the edge refused (text PostgreSQL cannot store, ...) is an invalid_request too.
      if (oauthPath && err instanceof AppError && err.status < 500) return sendOAuthError(reply, invalidRequest(err.message));
      if (oauthPath && !(err instanceof AppError) && typeof e.statusCode === 'number' && e.statusCode < 500) {
        return sendOAuthError(reply, invalidRequest(`The request body is malformed: ${e.message}`));
      }
      if (oauthPath) {
        req.log.error({ err }, 'token endpoint failed');
        return sendOAuthError(reply, new OAuthFailure(500, 'server_error', 'Internal error'));
      }
      if (req.url.startsWith('/authorize') && !(err instanceof AppError)) {
        req.log.error({ err }, 'authorization endpoint failed');
        return errorPage(reply, typeof e.statusCode === 'number' && e.statusCode < 500 ? 400 : 500, 'The sign-in request could not be processed.');
      }
      return deps.sendError(reply, err);
    });

    scope.get('/.well-known/openid-configuration', async (_req, reply) => reply.header('cache-control', 'public, max-age=300').send(discoveryDocument(deps.config.issuer)));
    scope.get('/.well-known/oauth-authorization-server', async (_req, reply) => reply.header('cache-control', 'public, max-age=300').send(discoveryDocument(deps.config.issuer)));
    scope.get('/jwks.json', async (req, reply) => {
      const result = await deps.execute(JWKS, {}, internalContext(req));
      if (result.errors?.length) return deps.sendGraphQLErrors(reply, result.errors);
      const keys = (result.data as { identitySigningKeys: Record<string, unknown>[] }).identitySigningKeys;
      return reply.header('cache-control', 'public, max-age=60').type('application/jwk-set+json').send({ keys });
    });
    scope.get('/authorize', (req, reply) => authorizeGet(deps, req, reply));
    scope.post('/authorize', (req, reply) => authorizePost(deps, req, reply));
    scope.post('/token', (req, reply) => token(deps, req, reply));
    scope.post('/introspect', (req, reply) => introspect(deps, req, reply));
    scope.post('/revocation', (req, reply) => revocation(deps, req, reply));
    scope.route({ method: ['GET', 'POST'], url: '/userinfo', handler: (req, reply) => userinfo(deps, req, reply) });
    scope.get('/logout', (req, reply) => endSession(deps, req, reply));
    scope.route({ method: ['GET', 'POST'], url: '/password/reset/confirm', handler: (req, reply) => resetConfirm(deps, req, reply) });
    scope.route({ method: ['GET', 'POST'], url: '/email/verify/confirm', handler: (req, reply) => verifyConfirm(deps, req, reply) });
  });
}

const form = (properties: Record<string, string>, required: string[] = []) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: { type: 'object', properties: Object.fromEntries(Object.entries(properties).map(([k, d]) => [k, { type: 'string', description: d }])), required },
    },
  },
});
const json = (description: string) => ({ description, content: { 'application/json': { schema: { type: 'object' } } } });
const oauthError = json('RFC 6749 error `{"error", "error_description"}`');
// The wire endpoints authenticate clients in their own ways (form fields, Basic, PKCE) or not at all; /userinfo takes an end-user token.
const op = (operationId: string, summary: string, extra: Record<string, unknown> = {}) => ({ operationId, summary, tags: [TAG], security: [], ...extra });
const BEARER = { security: [{ bearerAuth: [] }] };

export const identityHandlers: RawHandlerModule = {
  name: 'identity',
  register,
  openapi: {
    '/.well-known/openid-configuration': { get: op('identity.discovery', 'OIDC discovery', { responses: { 200: json('The provider metadata') } }) },
    '/jwks.json': { get: op('identity.jwks', 'Public signing keys', { responses: { 200: json('JWK set `{"keys": [...]}`') } }) },
    '/authorize': {
      get: op('identity.authorize', 'Authorization request: shows the hosted sign-in page', {
        description: 'response_type=code, client_id, redirect_uri (exact match), scope, state, nonce, code_challenge + code_challenge_method=S256 (required for public clients), prompt.',
        responses: { 200: { description: 'HTML sign-in form' }, 302: { description: 'Back to redirect_uri with error (RFC 6749 §4.1.2.1)' }, 400: { description: 'HTML page: unknown client or unregistered redirect_uri' } },
      }),
      post: op('identity.authorize.submit', 'Sign-in form submission', {
        requestBody: form({ email: 'E-mail', password: 'Password', totp_code: 'TOTP code (MFA)', action: '`sign_in` or `cancel`' }),
        responses: { 302: { description: 'Back to redirect_uri with code, state and iss' }, 401: { description: 'The form again, with the problem' } },
      }),
    },
    '/token': {
      post: op('identity.token', 'Issue tokens', {
        description: 'grant_type password (username, password, totp_code, scope), authorization_code (code, redirect_uri, code_verifier), client_credentials (scope), refresh_token (refresh_token, scope). Client authentication client_secret_basic or client_secret_post (public clients: client_id alone).',
        requestBody: form({ grant_type: 'Grant type', client_id: 'client_secret_post', client_secret: 'client_secret_post', username: '', password: '', totp_code: '', scope: '', code: '', redirect_uri: '', code_verifier: '', refresh_token: '' }, ['grant_type']),
        responses: { 200: json('`{access_token, token_type, expires_in, scope, refresh_token?, id_token?}`'), 400: oauthError, 401: oauthError, 429: oauthError },
      }),
    },
    '/userinfo': {
      get: op('identity.userinfo', 'Current user profile (OIDC claims)', { ...BEARER, responses: { 200: json('Claims'), 401: json('RFC 6750 error') } }),
      post: op('identity.userinfo.post', 'Current user profile (OIDC claims)', { ...BEARER, responses: { 200: json('Claims'), 401: json('RFC 6750 error') } }),
    },
    '/introspect': {
      post: op('identity.introspect', 'Inspect a token (RFC 7662)', {
        requestBody: form({ token: 'The token', token_type_hint: 'access_token or refresh_token' }, ['token']),
        responses: { 200: json('`{active, ...}`'), 401: oauthError },
      }),
    },
    '/revocation': {
      post: op('identity.revocation', 'Revoke a token (RFC 7009)', {
        requestBody: form({ token: 'The token', token_type_hint: 'access_token or refresh_token' }, ['token']),
        responses: { 200: { description: 'Revoked (also for unknown tokens)' }, 401: oauthError },
      }),
    },
    '/logout': {
      get: op('identity.logout.rp', 'RP-initiated logout (end_session_endpoint)', {
        description: 'id_token_hint, post_logout_redirect_uri (a registered redirect URI of the client), state, client_id.',
        responses: { 200: { description: 'HTML: signed out' }, 302: { description: 'Back to post_logout_redirect_uri' } },
      }),
    },
    '/password/reset/confirm': {
      get: op('identity.password.reset.page', 'The page behind the reset link (query token)', { responses: { 200: { description: 'HTML form' } } }),
      post: op('identity.password.reset.confirm', 'Confirm a password reset', {
        description: 'JSON `{token, new_password}` → 204; the page form answers HTML. Every session of the user is revoked.',
        responses: { 204: { description: 'Password changed' }, 401: json('INVALID_TOKEN'), 400: json('VALIDATION_FAILED') },
      }),
    },
    '/email/verify/confirm': {
      get: op('identity.email.verify.page', 'The page behind the verification link (query token)', { responses: { 200: { description: 'HTML form' } } }),
      post: op('identity.email.verify.confirm', 'Confirm e-mail verification', {
        description: 'JSON `{token}` → `{"email_verified": true}`; the page form answers HTML.',
        responses: { 200: json('`{"email_verified": true}`'), 401: json('INVALID_TOKEN') },
      }),
    },
  },
};

