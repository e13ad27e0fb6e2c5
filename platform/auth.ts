// Who is calling. The router/front door authenticates credentials and hands subgraphs a verified
// RequestContext: in-process as an object, over HTTP as a short-lived token signed with the internal secret.
import { SignJWT, jwtVerify } from 'jose';

export type Principal =
  | { kind: 'anonymous' }
  /** The router itself, e.g. resolving a credential; never given to an outside caller. */
  | { kind: 'internal' }
  /**
   * The install's operator, with an operator key (`top_...`, sent as `Authorization: Bearer`): the admin API only
   * (`/admin/api/v1`: plans, tenants, projects, suspension, usage, audit). Never a tenant's or a project's powers.
   * `operator` is the key's name, recorded in the audit log.
   */
  | { kind: 'operator'; operator: string; keyId: string }
  /** A developer account signed in with a tenant access token. */
  | { kind: 'tenant'; tenantId: string; sessionId: string }
  /**
   * A project API key (`X-Api-Key`): full access to that project. A `client_credentials` access token
   * from `/token` is the same principal (the client acts for its project), with its client and scopes.
   */
  | { kind: 'project'; projectId: string; tenantId: string; clientId?: string; scopes?: string[] }
  /**
   * A project's publishable key (`tpk_...`, also sent in `X-Api-Key`): made to ship in web pages and apps, it
   * opens only what an anonymous visitor may do (platform/admin-scopes.ts `PUBLISHABLE_FIELDS`).
   */
  | { kind: 'publishable'; projectId: string; tenantId: string }
  /** A project's end-user with an access token from `/token`; `mfa` says the sign-in used a TOTP code. */
  | {
      kind: 'user';
      projectId: string;
      userId: string;
      clientId: string;
      scopes: string[];
      mfa: boolean;
      sessionId?: string;
    };

export type RequestContext = {
  requestId: string;
  principal: Principal;
  /** Client address as seen by the front door (rate limits). */
  ip?: string;
  /**
   * How many nested function runs led to this request (an edge function's writes, the hooks they fire):
   * absent or 0 for an outside caller. Set only by the platform, never from a request; it travels in the
   * signed context so recursion (a hook whose function writes and fires the hook again) can be bounded.
   */
  depth?: number;
};

export const INTERNAL_CONTEXT_HEADER = 'x-tessera-context';
const CONTEXT_TTL_SECONDS = 60;
const AUDIENCE = 'tessera:subgraph';

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** Signs a request context for a subgraph reached over HTTP. */
export async function signContext(ctx: RequestContext, secret: string): Promise<string> {
  return await new SignJWT({ ctx })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${CONTEXT_TTL_SECONDS}s`)
    .sign(keyOf(secret));
}

/** Verifies a context token from the router; throws when missing, forged or expired. */
export async function verifyContext(token: string | undefined, secret: string): Promise<RequestContext> {
  if (!token) throw new Error('missing router context');
  const { payload } = await jwtVerify(token, keyOf(secret), { audience: AUDIENCE, algorithms: ['HS256'] });
  const ctx = payload.ctx as RequestContext | undefined;
  if (!ctx || typeof ctx.requestId !== 'string' || typeof ctx.principal?.kind !== 'string')
    throw new Error('malformed router context');
  return ctx;
}
