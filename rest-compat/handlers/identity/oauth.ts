// The OAuth 2.0 wire format shared by the identity provider's endpoints: RFC 6749 error bodies, form
// parameters (each at most once), the client's credentials (client_secret_basic, client_secret_post, and
// none for public clients; the identity subgraph checks them), client lookups for /authorize and
// /logout, the mapping of domain errors onto protocol errors, and the OpenAPI pieces the endpoint groups share.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../../platform/auth.ts';
import type { AppError } from '../../../platform/errors.ts';
import {
  INTERNAL_OPERATIONS,
  callInternal,
  isAnswerError,
  type InternalOperation,
  type OidcClientFacts,
  type OidcClientFactsInput,
} from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';

/** One group of endpoints (discovery, authorize, token, ...): its routes, registered in the provider's scope, and their OpenAPI path items. */
export type EndpointGroup = {
  register: (scope: FastifyInstance, deps: RawHandlerDeps) => void;
  openapi: Record<string, Record<string, Record<string, unknown>>>;
};

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
  new OAuthFailure(401, 'invalid_client', description, {
    'www-authenticate': 'Basic realm="tessera", charset="UTF-8"',
  });

/** Sends a protocol error (never cached). */
export function sendOAuthError(reply: FastifyReply, err: OAuthFailure): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  return reply
    .code(err.status)
    .header('cache-control', 'no-store')
    .type('application/json')
    .send({ error: err.error, error_description: err.message });
}

/** Maps an error the identity subgraph (or tenant) answered onto its RFC 6749 error. */
export function oauthFailureOf(e: AppError, log?: { error: (o: object, m: string) => void }): OAuthFailure {
  const code = e.code;
  const details = e.details;
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
      log?.error({ err: e }, 'unexpected identity error');
      return new OAuthFailure(500, 'server_error', 'Internal error');
  }
}

/** The parameters of a request (form body, JSON body or query string): each a string, at most once. */
export type Params = { get: (name: string) => string | undefined; names: string[] };

export function paramsOf(source: unknown): Params {
  if (source === undefined || source === null || source === '') return { get: () => undefined, names: [] };
  if (typeof source !== 'object' || Array.isArray(source))
    throw invalidRequest('The body must be application/x-www-form-urlencoded parameters');
  const record = source as Record<string, unknown>;
  for (const [name, value] of Object.entries(record)) {
    if (Array.isArray(value)) throw invalidRequest(`Parameter ${name.slice(0, 50)} is repeated`);
    if (value !== undefined && typeof value !== 'string')
      throw invalidRequest(`Parameter ${name.slice(0, 50)} must be a string`);
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
export type ClientFacts = OidcClientFactsInput;

/** The trusted context for the front door's own calls (client lookups, token grants). */
export function internalContext(req: FastifyRequest): RequestContext {
  return { requestId: String(req.id), principal: { kind: 'internal' }, ip: req.ip };
}

/**
 * Runs an operation of the table (platform/internal-operations.ts) as the front door itself; what the domain
 * answered as an error becomes the matching protocol error (anything thrown on the way passes through).
 */
export async function callOAuth<V, R>(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  operation: InternalOperation<V, R>,
  variables: V,
): Promise<R> {
  try {
    return await callInternal(deps, operation, variables, internalContext(req));
  } catch (err) {
    throw isAnswerError(err) ? oauthFailureOf(err, req.log) : err;
  }
}

/** Looks a client up by id and, when a secret is given, checks it; null for an unknown client. */
export async function lookupClient(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  clientId: string,
  clientSecret?: string,
): Promise<OidcClientFacts | null> {
  if (clientId.length > 200) return null;
  return (
    (await callOAuth(deps, req, INTERNAL_OPERATIONS.oidcClient, { clientId, clientSecret: clientSecret ?? null }))
      ._oidcClient ?? null
  );
}

/** Protocol answers are never cached. */
export function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** Any parameter given twice makes the whole request invalid (RFC 6749 §3.1): the first of each, and the name of one repeated. */
export function strictParams(source: unknown): { params: Params; repeated?: string } {
  const record = (source && typeof source === 'object' ? source : {}) as Record<string, unknown>;
  const repeated = Object.keys(record).find((k) => Array.isArray(record[k]));
  const cleaned = Object.fromEntries(Object.entries(record).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : v]));
  return { params: paramsOf(cleaned), repeated };
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
    if (params.get('client_secret') !== undefined)
      throw invalidRequest('Use one client authentication method, not both Basic and client_secret');
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
    if (bodyId !== undefined && bodyId !== id)
      throw invalidRequest('client_id in the body differs from the Basic credentials');
  } else {
    id = params.get('client_id');
    secret = params.get('client_secret');
  }
  if (!id) throw invalidClient('Client authentication is required (client_secret_basic or client_secret_post)');
  if (id.length > 200) throw invalidClient('Client authentication failed');
  return { clientId: id, clientSecret: secret ?? null };
}

// ── OpenAPI pieces of the endpoint groups ──────────────────────────────────────────────────────────────────────
export const TAG = 'Identity provider';
export const form = (properties: Record<string, string>, required: string[] = []) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(properties).map(([k, d]) => [k, { type: 'string', description: d }]),
        ),
        required,
      },
    },
  },
});
export const json = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});
/** An HTML page (the hosted sign-in pages, the mail links' forms). */
export const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
/** A redirect: the `Location` header says where. */
export const redirect = (description: string) => ({
  description,
  headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } },
});
/** The RFC 6749 error body, `{"error", "error_description"}`. */
const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
};
export const oauthErrorResponse = {
  description: 'RFC 6749 error `{"error", "error_description"}`',
  content: { 'application/json': { schema: OAUTH_ERROR } },
};
/** A hosted form's refusal: the page again, or (a body that is no form at all) the RFC 6749 error. */
export const htmlOrOAuthError = (description: string) => ({
  description: `${description}; a body that is not form parameters (a repeated field, JSON) gets the RFC 6749 error`,
  content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: OAUTH_ERROR } },
});
// The wire endpoints authenticate clients in their own ways (form fields, Basic, PKCE) or not at all; /userinfo takes an end-user token.
export const op = (operationId: string, summary: string, extra: Record<string, unknown> = {}) => ({
  operationId,
  summary,
  tags: [TAG],
  security: [],
  ...extra,
});
