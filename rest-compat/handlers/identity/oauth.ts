// The OAuth 2.0 wire format shared by the identity provider's endpoints: RFC 6749 error bodies, form
// parameters (each at most once), the client's credentials (client_secret_basic, client_secret_post, and
// none for public clients; the identity subgraph checks them), client lookups for /authorize and
// /logout, and the mapping of domain errors onto protocol errors.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import type { RequestContext } from '../../../platform/auth.ts';
import type { RawHandlerDeps } from '../types.ts';

/** A protocol error on its way to the wire: `{"error", "error_description"}` with its status and headers. */
export class OAuthFailure extends Error {
  readonly status: number;
  readonly error: string;
  readonly headers: Record<string, string>;
  constructor(status: number, error: string, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.status = status;
    this.error = error;
    this.headers = headers;
  }
}

export const invalidRequest = (description: string) => new OAuthFailure(400, 'invalid_request', description);
export const invalidClient = (description: string) =>
  new OAuthFailure(401, 'invalid_client', description, { 'www-authenticate': 'Basic realm="tessera", charset="UTF-8"' });

/** Sends a protocol error (never cached). */
export function sendOAuthError(reply: FastifyReply, err: OAuthFailure): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  return reply.code(err.status).header('cache-control', 'no-store').type('application/json').send({ error: err.error, error_description: err.message });
}

/** Maps a GraphQL error of the identity subgraph (or tenant) onto its RFC 6749 error. */
export function oauthFailureOf(e: GraphQLFormattedError, log?: { error: (o: object, m: string) => void }): OAuthFailure {
  const code = e.extensions?.code;
  const details = e.extensions?.details as Record<string, unknown> | undefined;
  if (details?.oauth_error === 'invalid_client') return invalidClient(e.message);
  if (typeof details?.oauth_error === 'string') return new OAuthFailure(400, details.oauth_error, e.message);
  switch (code) {
    case 'RATE_LIMITED': {
      const retry = typeof details?.retry_after === 'number' ? details.retry_after : 60;
      return new OAuthFailure(429, 'rate_limited', e.message, { 'retry-after': String(retry) });
    }
    case 'INVALID_CREDENTIALS':
      return new OAuthFailure(400, 'invalid_grant', 'The username or password is wrong');
    case 'INVALID_MFA_CODE':
      return new OAuthFailure(400, 'invalid_grant', 'The TOTP code is wrong or already used');
    case 'MFA_REQUIRED':
      return new OAuthFailure(400, 'mfa_required', 'MFA is enabled for this account: send totp_code');
    case 'INVALID_TOKEN':
      return new OAuthFailure(400, 'invalid_grant', e.message);
    case 'VALIDATION_FAILED':
    case 'BAD_USER_INPUT':
    case 'BAD_REQUEST':
      return invalidRequest(e.message);
    case 'SERVICE_UNAVAILABLE':
      return new OAuthFailure(503, 'temporarily_unavailable', e.message);
    default:
      log?.error({ graphqlError: e }, 'unexpected identity error');
      return new OAuthFailure(500, 'server_error', 'Internal error');
  }
}

/** The parameters of a request (form body, JSON body or query string): each a string, at most once. */
export type Params = { get: (name: string) => string | undefined; names: string[] };

export function paramsOf(source: unknown): Params {
  if (source === undefined || source === null || source === '') return { get: () => undefined, names: [] };
  if (typeof source !== 'object' || Array.isArray(source)) throw invalidRequest('The body must be application/x-www-form-urlencoded parameters');
  const record = source as Record<string, unknown>;
  for (const [name, value] of Object.entries(record)) {
    if (Array.isArray(value)) throw invalidRequest(`Parameter ${name.slice(0, 50)} is repeated`);
    if (value !== undefined && typeof value !== 'string') throw invalidRequest(`Parameter ${name.slice(0, 50)} must be a string`);
  }
  return {
    get: (name) => {
      const v = record[name] as string | undefined;
      return v === undefined || v === '' ? undefined : v;
    },
    names: Object.keys(record),
  };
}

/** What the tenant subgraph vouched for about a client, in the identity subgraph's input shape. */
export type ClientFacts = { clientId: string; projectId: string; tenantId: string; grantTypes: string[]; redirectUris: string[]; public: boolean; allowedScopes: string[] };

const OIDC_CLIENT = `query IdentityOidcClient($clientId: String!, $clientSecret: String) {
  _oidcClient(clientId: $clientId, clientSecret: $clientSecret) { clientId projectId tenantId redirectUris grantTypes allowedScopes public secretValid }
}`;

/** The trusted context for the front door's own calls (client lookups, token grants). */
export function internalContext(req: FastifyRequest): RequestContext {
  return { requestId: String(req.id), principal: { kind: 'internal' }, ip: req.ip };
}

/** Looks a client up by id and, when a secret is given, checks it; null for an unknown client. */
export async function lookupClient(deps: RawHandlerDeps, req: FastifyRequest, clientId: string, clientSecret?: string): Promise<(ClientFacts & { secretValid: boolean | null }) | null> {
  if (clientId.length > 200) return null;
  const result = await deps.execute(OIDC_CLIENT, { clientId, clientSecret: clientSecret ?? null }, internalContext(req));
  if (result.errors?.length) throw oauthFailureOf(result.errors[0]!, req.log);
  const c = (result.data as { _oidcClient: (ClientFacts & { secretValid: boolean | null }) | null })._oidcClient;
  return c ?? null;
}

function decodeFormComponent(value: string): string {
  // Most ids and secrets need no decoding: skip the regex and decodeURIComponent then.
  if (!value.includes('%') && !value.includes('+')) return value;
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

/** A client's credentials as presented; the identity subgraph checks them (`credentials` of its operations). */
export type ClientCredentials = { clientId: string; clientSecret: string | null };

/**
 * The client credentials of a token, introspection or revocation request: HTTP Basic
 * (client_secret_basic), client_id + client_secret in the body (client_secret_post), or, for public
 * clients only, client_id alone. More than one method is invalid_request; no client_id or a malformed
 * Basic header is invalid_client. Whether they are right is for the identity subgraph to say.
 */
export function clientCredentialsOf(req: FastifyRequest, params: Params): ClientCredentials {
  const header = req.headers.authorization;
  let id: string | undefined;
  let secret: string | undefined;
  if (typeof header === 'string' && /^basic\s/i.test(header)) {
    if (params.get('client_secret') !== undefined) throw invalidRequest('Use one client authentication method, not both Basic and client_secret');
    try {
      const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new Error('no colon');
      id = decodeFormComponent(decoded.slice(0, colon));
      secret = decodeFormComponent(decoded.slice(colon + 1));
    } catch {
      throw invalidClient('The Basic authorization header is malformed');
    }
    const bodyId = params.get('client_id');
    if (bodyId !== undefined && bodyId !== id) throw invalidRequest('client_id in the body differs from the Basic credentials');
  } else {
    id = params.get('client_id');
    secret = params.get('client_secret');
  }
  if (!id) throw invalidClient('Client authentication is required (client_secret_basic or client_secret_post)');
  if (id.length > 200) throw invalidClient('Client authentication failed');
  return { clientId: id, clientSecret: secret ?? null };
}
