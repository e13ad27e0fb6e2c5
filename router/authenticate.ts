// Turns the credentials of an incoming request into a verified Principal by asking the subgraph that
// owns them (tenant: API keys and tenant tokens; identity: end-user tokens). Invalid credentials are
// an error, never a silent fall-back to anonymous.
import { decodeJwt } from 'jose';
import type { Principal, RequestContext } from '../platform/auth.ts';
import { AppError, errors } from '../platform/errors.ts';
import type { SubgraphHandle } from '../platform/subgraph.ts';
import {
  INTERNAL_OPERATIONS,
  callInternal,
  isAnswerError,
  type InternalOperation,
  type ResultOf,
} from '../platform/internal-operations.ts';
import type { CachedPrincipal, CredentialCache } from './credential-cache.ts';

export type Credentials = { apiKey?: string; bearer?: string };

/** The prefix of operator keys (platform/auth.ts `operator`). */
export const OPERATOR_KEY_PREFIX = 'top_';

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

/** The cache key of exactly the credential the tenant subgraph would check (a bearer token wins over an API key). */
const cacheKeyOf = (cache: CredentialCache, creds: Credentials): string =>
  cache.keyOf(creds.bearer ? { bearer: creds.bearer } : { apiKey: creds.apiKey });

/**
 * The principal the cache holds for the credentials as it stands, without waiting for changes committed elsewhere
 * (a revoked credential may still be found): only for decisions that grant nothing, such as refusing a request.
 */
export function peekPrincipal(creds: Credentials, cache: CredentialCache | undefined): CachedPrincipal | undefined {
  if (!cache || (!creds.apiKey && !creds.bearer)) return undefined;
  return cache.peek(cacheKeyOf(cache, creds));
}

/**
 * Resolves credentials to a principal; anonymous when none are given. With `cache`, the tenant subgraph's
 * answers (API keys, tenant tokens) are remembered until revoked (router/credential-cache.ts).
 */
export async function authenticate(
  creds: Credentials,
  handles: Map<string, SubgraphHandle>,
  requestId: string,
  cache?: CredentialCache,
): Promise<Principal> {
  if (!creds.apiKey && !creds.bearer) return { kind: 'anonymous' };
  if (!cache) return await lookUp(creds, handles, requestId);
  // Only the tenant subgraph's answers are cached, each until its token's expiry at the latest: a hit needs no decoding.
  const key = cacheKeyOf(cache, creds);
  const hit = await cache.get(key);
  if (!hit) return await cache.shared(key, () => lookUp(creds, handles, requestId, cache, key));
  // A busy credential is checked again in the background before its entry expires (credential-cache.ts dueForRecheck);
  // one its subgraph no longer vouches for is dropped (a revocation is announced anyway: this is the safety net's).
  if (cache.dueForRecheck(key))
    cache
      .shared(key, () => lookUp(creds, handles, requestId, cache, key))
      .catch((err: unknown) => {
        if (err instanceof AppError && err.status < 500) cache.forget(key);
      });
  return hit;
}

/** Asks the subgraph that owns the credentials who they stand for; with `cache`, remembers the tenant subgraph's answer. */
async function lookUp(
  creds: Credentials,
  handles: Map<string, SubgraphHandle>,
  requestId: string,
  cache?: CredentialCache,
  key?: string,
): Promise<Principal> {
  const internal: RequestContext = { requestId, principal: { kind: 'internal' } };
  let op: typeof INTERNAL_OPERATIONS.authenticate | typeof INTERNAL_OPERATIONS.authenticateUser =
    INTERNAL_OPERATIONS.authenticate;
  let expiresAt: number | undefined;
  // An operator key (`top_...`) is no JWT: tenant management checks it (its hash, or the bootstrap key).
  const operatorKey = creds.bearer?.startsWith(OPERATOR_KEY_PREFIX) === true;
  if (creds.bearer && !operatorKey) {
    let claims: Record<string, unknown>;
    try {
      claims = decodeJwt(creds.bearer);
    } catch {
      // A project key sent as a bearer token is the usual slip: say where it goes.
      throw errors.invalidToken(
        /^t[sp]k_/.test(creds.bearer)
          ? 'The bearer token is not a JWT: this looks like a project API key; send it as X-Api-Key: <key>, not Authorization: Bearer'
          : 'The bearer token is not a JWT',
      );
    }
    // Tenant tokens belong to the tenant subgraph; every other JWT (end-user and client tokens from
    // /token) to the identity subgraph, which checks it and says who it stands for.
    if (claims.typ !== 'tenant') op = INTERNAL_OPERATIONS.authenticateUser;
    // A cached token is served only until its own expiry (checked against the subgraph's answer on first use).
    if (typeof claims.exp === 'number') expiresAt = claims.exp * 1000;
  }
  const handle = handles.get(op.subgraph);
  if (!handle) throw errors.unavailable(`${op.subgraph} service is not available`);
  if (op === INTERNAL_OPERATIONS.authenticateUser)
    return principalOfUserToken(
      await ask(handle, INTERNAL_OPERATIONS.authenticateUser, { token: creds.bearer! }, internal),
    );
  // No exp claim: never cached (an operator key has none, and is cached until revoked: `operatorKeyIds`).
  if (creds.bearer && !operatorKey && expiresAt === undefined) expiresAt = Date.now();
  const generation = cache?.generation() ?? 0;
  const vars = creds.bearer ? { token: creds.bearer } : { apiKey: creds.apiKey };
  const p = (await ask(handle, INTERNAL_OPERATIONS.authenticate, vars, internal))._authenticate;
  let principal: CachedPrincipal;
  if (p.kind === 'tenant' && p.tenantId && p.sessionId)
    principal = { kind: 'tenant', tenantId: p.tenantId, sessionId: p.sessionId };
  else if (p.kind === 'project' && p.projectId && p.tenantId)
    principal = { kind: 'project', projectId: p.projectId, tenantId: p.tenantId };
  else if (p.kind === 'publishable' && p.projectId && p.tenantId)
    principal = { kind: 'publishable', projectId: p.projectId, tenantId: p.tenantId };
  else if (p.kind === 'operator' && operatorKey && p.operator && p.keyId)
    principal = { kind: 'operator', operator: p.operator, keyId: p.keyId };
  else throw new AppError('INTERNAL', `unexpected principal kind ${p.kind}`);
  if (cache && key) cache.remember(key, Object.freeze(principal), generation, expiresAt);
  return principal;
}

/** Asks the subgraph owning the credential; its error becomes the caller's: a bad credential stays a 401, anything else is internal. */
async function ask<V, R>(
  handle: SubgraphHandle,
  op: InternalOperation<V, R>,
  variables: V,
  ctx: RequestContext,
): Promise<R> {
  try {
    return await callInternal(handle, op, variables, ctx);
  } catch (err) {
    if (!isAnswerError(err)) throw err;
    if (
      err.code === 'INVALID_TOKEN' ||
      err.code === 'INVALID_API_KEY' ||
      err.code === 'UNAUTHENTICATED' ||
      err.code === 'TENANT_SUSPENDED' ||
      err.code === 'SERVICE_UNAVAILABLE'
    )
      throw err;
    throw new AppError('INTERNAL', err.message);
  }
}

/** An end-user token is a `user` principal; a client_credentials token acts for its project (`project`, with its client and scopes). */
function principalOfUserToken(data: ResultOf<typeof INTERNAL_OPERATIONS.authenticateUser>): Principal {
  const p = data._authenticateUser;
  if (!p) throw errors.invalidToken();
  if (p.kind === 'user' && p.userId) {
    return {
      kind: 'user',
      projectId: p.projectId,
      userId: p.userId,
      clientId: p.clientId,
      scopes: p.scopes,
      mfa: p.mfa,
      ...(p.sessionId ? { sessionId: p.sessionId } : {}),
    };
  }
  if (p.kind === 'project' && p.tenantId)
    return { kind: 'project', projectId: p.projectId, tenantId: p.tenantId, clientId: p.clientId, scopes: p.scopes };
  throw new AppError('INTERNAL', `unexpected principal kind ${p.kind}`);
}
