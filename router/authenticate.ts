// Turns the credentials of an incoming request into a verified Principal by asking the subgraph that
// owns them (tenant: API keys and tenant tokens; identity: end-user tokens). Invalid credentials are
// an error, never a silent fall-back to anonymous.
import { decodeJwt } from 'jose';
import type { Principal, RequestContext } from '../platform/auth.ts';
import { AppError, errors } from '../platform/errors.ts';
import type { SubgraphHandle } from '../platform/subgraph.ts';

const AUTHENTICATE = `query Authenticate($apiKey: String, $token: String) {
  _authenticate(apiKey: $apiKey, token: $token) { kind tenantId projectId sessionId }
}`;

export type Credentials = { apiKey?: string; bearer?: string };

/** Reads `X-Api-Key` and `Authorization: Bearer` from request headers. */
export function credentialsOf(headers: Record<string, string | string[] | undefined>): Credentials {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const apiKey = one(headers['x-api-key'])?.trim() || undefined;
  const auth = one(headers.authorization)?.trim();
  let bearer: string | undefined;
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m) throw errors.invalidToken('Authorization header must be "Bearer <access_token>"');
    bearer = m[1];
  }
  return { apiKey, bearer };
}

/** Resolves credentials to a principal; anonymous when none are given. */
export async function authenticate(creds: Credentials, handles: Map<string, SubgraphHandle>, requestId: string): Promise<Principal> {
  if (!creds.apiKey && !creds.bearer) return { kind: 'anonymous' };
  const internal: RequestContext = { requestId, principal: { kind: 'internal' } };
  let owner = 'tenant';
  if (creds.bearer) {
    let claims: Record<string, unknown>;
    try {
      claims = decodeJwt(creds.bearer);
    } catch {
      throw errors.invalidToken('The bearer token is not a JWT');
    }
    // Only tenant tokens are issued so far; end-user tokens will be resolved by the identity subgraph.
    if (claims.typ !== 'tenant') throw errors.invalidToken();
    owner = 'tenant';
  }
  const handle = handles.get(owner);
  if (!handle) throw errors.unavailable(`${owner} service is not available`);
  const vars = creds.bearer ? { token: creds.bearer } : { apiKey: creds.apiKey };
  const result = await handle.execute(AUTHENTICATE, vars, internal, 'Authenticate');
  const err = result.errors?.[0];
  if (err) {
    const code = err.extensions?.code;
    if (code === 'INVALID_TOKEN' || code === 'INVALID_API_KEY' || code === 'UNAUTHENTICATED') throw new AppError(code, err.message);
    if (code === 'SERVICE_UNAVAILABLE') throw errors.unavailable(err.message);
    throw new AppError('INTERNAL', err.message);
  }
  const p = (result.data as { _authenticate: { kind: string; tenantId?: string; projectId?: string; sessionId?: string } })._authenticate;
  if (p.kind === 'tenant' && p.tenantId && p.sessionId) return { kind: 'tenant', tenantId: p.tenantId, sessionId: p.sessionId };
  if (p.kind === 'project' && p.projectId && p.tenantId) return { kind: 'project', projectId: p.projectId, tenantId: p.tenantId };
  throw new AppError('INTERNAL', `unexpected principal kind ${p.kind}`);
}
