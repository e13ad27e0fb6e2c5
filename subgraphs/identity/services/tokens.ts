// Tokens of end-users and clients. Access tokens are JWTs (RFC 9068 `at+jwt`) signed with the identity
// key; every check of one (the router's, on every request) verifies the signature locally and then reads,
// in one statement, the key's status, the token's own revocation (jti), its session and its project, so
// revocation, logout, password change and key retirement take effect everywhere at once. For
// client_credentials tokens that read is remembered per jti (token-cache.ts) and forgotten by every
// process as soon as the token is revoked, its project deleted or a key retired (a broadcast).
// Refresh tokens are opaque, stored hashed in their session (the refresh-token family) and rotated on use;
// presenting a rotated one revokes the family.
import crypto from 'node:crypto';
import type { JWTPayload } from 'jose';
import { errors } from '../../../platform/errors.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { announceLocally, publishBroadcast } from '../../../platform/broadcast.ts';
import { publishEventIfWanted } from '../../../platform/events.ts';
import { EndUserSessionEntity, type EndUser, type EndUserSession } from '../entities/index.ts';
import type { ClientFacts, ServiceDeps } from './context.ts';
import type { SigningKeyService } from './signing-keys.ts';
import type { TokenStateCache } from './token-cache.ts';
import { claimsOf, toEndUserView } from './users.ts';
import { oauthError } from './oauth-errors.ts';
import { isUuid } from '../../../platform/ids.ts';
import { newRefreshSession, revokeReusedSessions, rotateRefreshToken } from '../../../platform/refresh-sessions.ts';
import type { AuthenticatedToken } from '../../../platform/internal-operations.ts';
import { roleOfScope } from './scopes.ts';

const REFRESH_PREFIX = 'tur_';
export const ACCESS_TOKEN_TYP = 'at+jwt';

export type TokenSet = {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken: string | null;
  idToken: string | null;
  scope: string;
};

export type { AuthenticatedToken };

export type Introspection = {
  active: boolean;
  scope?: string;
  clientId?: string;
  username?: string;
  tokenType?: string;
  exp?: number;
  iat?: number;
  sub?: string;
  aud?: string;
  iss?: string;
  jti?: string;
  projectId?: string;
  sid?: string;
};

type Deps = Pick<ServiceDeps, 'db' | 'config' | 'logger'> & { keys: SigningKeyService; cache: TokenStateCache };

export type TokenService = ReturnType<typeof createTokenService>;

/** `at_hash` of OIDC Core §3.1.3.6 for ES256: left half of the SHA-256 of the access token. */
function atHash(accessToken: string): string {
  const digest = crypto.createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

const looksLikeJwt = (t: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(t);

export function createTokenService({ db, config, logger, keys, cache }: Deps) {
  async function signAccessToken(claims: {
    projectId: string;
    clientId: string;
    sub: string;
    typ: 'user' | 'client';
    scopes: string[];
    sid?: string;
    authTime?: Date;
    amr?: string[];
    tenantId?: string;
  }): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = config.accessTokenTtl;
    const payload: JWTPayload = {
      iss: config.issuer,
      sub: claims.sub,
      aud: claims.clientId,
      client_id: claims.clientId,
      project_id: claims.projectId,
      scope: claims.scopes.join(' '),
      typ: claims.typ,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + expiresIn,
      ...(claims.sid ? { sid: claims.sid } : {}),
      ...(claims.authTime ? { auth_time: Math.floor(claims.authTime.getTime() / 1000) } : {}),
      ...(claims.amr ? { amr: claims.amr } : {}),
      ...(claims.tenantId ? { tenant_id: claims.tenantId } : {}),
    };
    return { token: await keys.sign(payload, ACCESS_TOKEN_TYP), expiresIn };
  }

  /** Access token, refresh token and (for `openid`) ID token of a session. */
  async function issueForSession(
    session: EndUserSession,
    user: EndUser,
    refreshToken: string,
    opts: { scopes?: string[]; nonce?: string | null } = {},
  ): Promise<TokenSet> {
    const scopes = opts.scopes ?? session.scope.split(' ').filter(Boolean);
    const { token, expiresIn } = await signAccessToken({
      projectId: session.projectId,
      clientId: session.clientId,
      sub: user.id,
      typ: 'user',
      scopes,
      sid: session.id,
      authTime: session.authTime,
      amr: session.amr,
    });
    let idToken: string | null = null;
    if (scopes.includes('openid')) {
      const now = Math.floor(Date.now() / 1000);
      idToken = await keys.sign(
        {
          ...claimsOf(toEndUserView(user), scopes),
          iss: config.issuer,
          aud: session.clientId,
          iat: now,
          exp: now + config.accessTokenTtl,
          auth_time: Math.floor(session.authTime.getTime() / 1000),
          sid: session.id,
          amr: session.amr,
          at_hash: atHash(token),
          ...(opts.nonce ? { nonce: opts.nonce } : {}),
        },
        'JWT',
      );
    }
    return { accessToken: token, tokenType: 'Bearer', expiresIn, refreshToken, idToken, scope: scopes.join(' ') };
  }

  async function revokeSession(id: string, reason: string): Promise<void> {
    await db
      .em()
      .nativeUpdate(EndUserSessionEntity, { id, revokedAt: null }, { revokedAt: new Date(), revokedReason: reason });
  }

  /**
   * In one statement: the key's status, the token's revocation, its project's deletion and (end-user
   * tokens) its session. INVALID_TOKEN when any says no; a valid client token is remembered.
   */
  async function checkState(
    typ: 'user' | 'client',
    kid: string,
    p: JWTPayload & Record<string, unknown>,
    sid: unknown,
  ): Promise<{ roles: string[] }> {
    const since = cache.begin();
    // For a user token also the session (not revoked, the user not disabled) and the user's roles now.
    const [row] = await db.em().execute<
      {
        key_status: string | null;
        revoked: boolean;
        project_deleted: boolean;
        client_deleted: boolean;
        session_ok: boolean | null;
        roles: string[] | null;
      }[]
    >(
      `select (select status from identity_signing_keys where kid = ?) as key_status,
              exists (select 1 from identity_revoked_tokens where jti = ?) as revoked,
              exists (select 1 from identity_deleted_projects where project_id = ?) as project_deleted,
              exists (select 1 from identity_deleted_clients where client_id = ?) as client_deleted,
              s.ok as session_ok, s.roles
         from (select 1) as one
         left join lateral (select s.revoked_at is null and u.disabled_at is null as ok, u.roles
                              from identity_sessions s join identity_users u on u.id = s.user_id where s.id = ? and s.user_id = ?) as s on true`,
      [
        kid,
        p.jti,
        p.project_id,
        p.client_id,
        sid ?? '00000000-0000-0000-0000-000000000000',
        typ === 'user' ? p.sub : '00000000-0000-0000-0000-000000000000',
      ],
    );
    if (
      !row ||
      (row.key_status !== 'current' && row.key_status !== 'previous') ||
      row.revoked ||
      row.project_deleted ||
      row.client_deleted
    )
      throw errors.invalidToken();
    if (typ === 'user' && row.session_ok !== true) throw errors.invalidToken();
    if (typ === 'client') cache.remember(since, p.jti as string, p.project_id as string, kid);
    return { roles: row.roles ?? [] };
  }

  /** The router check of an access token (see the file comment). INVALID_TOKEN for anything wrong. */
  async function authenticate(token: string): Promise<AuthenticatedToken> {
    return (await check(token)).auth;
  }

  /** `authenticate`, with the verified claims (introspection answers them). */
  async function check(token: string): Promise<{ auth: AuthenticatedToken; payload: JWTPayload }> {
    const { payload, kid } = await keys.verify(token, { typ: ACCESS_TOKEN_TYP });
    const p = payload as JWTPayload & Record<string, unknown>;
    const typ = p.typ;
    if (
      (typ !== 'user' && typ !== 'client') ||
      !isUuid(p.project_id) ||
      typeof p.jti !== 'string' ||
      typeof p.client_id !== 'string' ||
      typeof p.sub !== 'string'
    ) {
      throw errors.invalidToken();
    }
    const sid = typ === 'user' ? p.sid : null;
    if (typ === 'user' && (!isUuid(sid) || !isUuid(p.sub))) throw errors.invalidToken();
    if (typ === 'client' && !isUuid(p.tenant_id)) throw errors.invalidToken();
    // A client token found valid before, with nothing announced since, needs no read (token-cache.ts).
    const cached = typ === 'client' && cache.known(p.jti, p.project_id as string, kid);
    const state = cached ? null : await checkState(typ, kid, p, sid);
    let scopes = typeof p.scope === 'string' ? p.scope.split(' ').filter(Boolean) : [];
    // A role scope counts only while the project still assigns the role to the user (taken away: gone at once).
    if (typ === 'user')
      scopes = scopes.filter((s) => roleOfScope(s) === undefined || state!.roles.includes(roleOfScope(s)!));
    const amr = Array.isArray(p.amr) ? p.amr : [];
    const auth: AuthenticatedToken = {
      kind: typ === 'user' ? 'user' : 'project',
      projectId: p.project_id as string,
      tenantId: typ === 'client' ? (p.tenant_id as string) : null,
      userId: typ === 'user' ? p.sub : null,
      clientId: p.client_id,
      scopes,
      mfa: amr.includes('otp'),
      sessionId: (sid as string | null) ?? null,
    };
    return { auth, payload };
  }

  return {
    issueForSession,
    revokeSession,
    authenticate,

    /** Starts a session (a refresh-token family) for a completed sign-in. */
    async startSession(
      user: EndUser,
      client: ClientFacts,
      opts: { scopes: string[]; amr: string[]; authTime: Date; ip?: string },
    ): Promise<{ session: EndUserSession; refreshToken: string }> {
      const refreshToken = randomToken(REFRESH_PREFIX);
      const session = await db.em().transactional(async (em) => {
        const made = em.create(EndUserSessionEntity, {
          id: crypto.randomUUID(),
          projectId: user.projectId,
          userId: user.id,
          clientId: client.clientId,
          scope: opts.scopes.join(' '),
          amr: opts.amr,
          authTime: opts.authTime,
          ...newRefreshSession(refreshToken, config.refreshTokenTtl, opts.ip),
        });
        await em.flush();
        // A completed sign-in, for the project's outbound event subscriptions (user.signed_in) when it has any.
        await publishEventIfWanted(em, 'identity.user.signed_in', {
          projectId: user.projectId,
          userId: user.id,
          email: user.email,
          clientId: client.clientId,
          sessionId: made.id,
          amr: opts.amr,
          at: made.createdAt.toISOString(),
        });
        return made;
      });
      return { session, refreshToken };
    },

    /** A client_credentials token: the client acting for its project (no user, no refresh token). */
    async issueClientToken(client: ClientFacts, scopes: string[]): Promise<TokenSet> {
      const { token, expiresIn } = await signAccessToken({
        projectId: client.projectId,
        clientId: client.clientId,
        sub: client.clientId,
        typ: 'client',
        scopes,
        tenantId: client.tenantId,
      });
      return {
        accessToken: token,
        tokenType: 'Bearer',
        expiresIn,
        refreshToken: null,
        idToken: null,
        scope: scopes.join(' '),
      };
    },

    /**
     * Rotates a refresh token of `client`. The swap is one conditional UPDATE (of two requests with the
     * same token only one wins); an already rotated token revokes its whole family.
     */
    async rotateRefreshToken(
      client: ClientFacts,
      refreshToken: unknown,
      check?: (session: EndUserSession) => void,
    ): Promise<{ session: EndUserSession; refreshToken: string }> {
      if (typeof refreshToken !== 'string' || !refreshToken.startsWith(REFRESH_PREFIX))
        throw oauthError('invalid_grant', 'The refresh token is invalid, expired or revoked');
      const oldHash = sha256Hex(refreshToken);
      const em = db.em();
      const owner = await em.findOne(EndUserSessionEntity, { refreshTokenHash: oldHash });
      if (owner && (owner.clientId !== client.clientId || owner.projectId !== client.projectId)) {
        throw oauthError('invalid_grant', 'The refresh token was issued to another client');
      }
      // Refuse a bad request before the token is used up.
      if (owner && check) check(owner);
      const next = randomToken(REFRESH_PREFIX);
      const row = await rotateRefreshToken<{ id: string }>(em, {
        table: 'identity_sessions',
        oldHash,
        nextToken: next,
        ttlSeconds: config.refreshTokenTtl,
        returning: 'id',
        where: 'and client_id = ?',
        params: [client.clientId],
      });
      if (!row) {
        const reused = await revokeReusedSessions(em, 'identity_sessions', oldHash);
        if (reused.length > 0) {
          logger.warn({ sessionId: reused[0] }, 'rotated refresh token presented again: token family revoked');
          throw oauthError('invalid_grant', 'The refresh token was already used: every token of its family is revoked');
        }
        throw oauthError('invalid_grant', 'The refresh token is invalid, expired or revoked');
      }
      const session = (await db.em().findOne(EndUserSessionEntity, { id: row.id })) as EndUserSession;
      return { session, refreshToken: next };
    },

    /** RFC 7662: what `token` is, for a client of `projectId`; inactive for anything not valid in that project. */
    async introspect(token: string, projectId: string): Promise<Introspection> {
      if (looksLikeJwt(token)) {
        try {
          const { auth, payload } = await check(token);
          if (auth.projectId !== projectId) return { active: false };
          let username: string | undefined;
          if (auth.userId) {
            const rows = await db
              .em()
              .execute<{ email: string }[]>('select email from identity_users where id = ?', [auth.userId]);
            username = rows[0]?.email;
          }
          return {
            active: true,
            scope: auth.scopes.join(' '),
            clientId: auth.clientId,
            username,
            tokenType: 'Bearer',
            exp: payload.exp,
            iat: payload.iat,
            sub: payload.sub,
            aud: auth.clientId,
            iss: payload.iss,
            jti: payload.jti,
            projectId: auth.projectId,
            sid: auth.sessionId ?? undefined,
          };
        } catch {
          return { active: false };
        }
      }
      if (!token.startsWith(REFRESH_PREFIX)) return { active: false };
      const rows = await db.em().execute<
        {
          id: string;
          user_id: string;
          client_id: string;
          scope: string;
          created_at: Date;
          expires_at: Date;
          email: string;
        }[]
      >(
        `select s.id, s.user_id, s.client_id, s.scope, s.created_at, s.expires_at, u.email
           from identity_sessions s join identity_users u on u.id = s.user_id
          where s.refresh_token_hash = ? and s.project_id = ? and s.revoked_at is null and s.expires_at > now()
            and not exists (select 1 from identity_deleted_projects d where d.project_id = s.project_id)`,
        [sha256Hex(token), projectId],
      );
      const s = rows[0];
      if (!s) return { active: false };
      return {
        active: true,
        scope: s.scope,
        clientId: s.client_id,
        username: s.email,
        tokenType: 'refresh_token',
        exp: Math.floor(new Date(s.expires_at).getTime() / 1000),
        iat: Math.floor(new Date(s.created_at).getTime() / 1000),
        sub: s.user_id,
        aud: s.client_id,
        iss: config.issuer,
        projectId,
        sid: s.id,
      };
    },

    /**
     * RFC 7009: revokes an access token (its jti) or a refresh token (its whole family, and with it the
     * access tokens of the session). Tokens of other projects and unknown tokens are ignored (200).
     */
    async revoke(token: string, projectId: string): Promise<void> {
      if (looksLikeJwt(token)) {
        let payload: JWTPayload;
        try {
          ({ payload } = await keys.verify(token, { typ: ACCESS_TOKEN_TYP, allowExpired: true }));
        } catch {
          return;
        }
        if (payload.project_id !== projectId || typeof payload.jti !== 'string') return;
        const jti = payload.jti;
        await db.em().transactional(async (em) => {
          await em.execute(
            'insert into identity_revoked_tokens (jti, project_id, expires_at, revoked_at) values (?, ?, ?, now()) on conflict do nothing',
            [jti, projectId, new Date((payload.exp ?? 0) * 1000)],
          );
          // Every process forgets it knew the token valid (this one right below, once committed).
          await publishBroadcast(em, 'access-tokens.changed', { jtis: [jti] });
        });
        announceLocally('access-tokens.changed', { jtis: [jti] });
        // The list only needs tokens that could still verify; forget the rest as we go.
        await db
          .em()
          .execute(
            `delete from identity_revoked_tokens where ctid in (select ctid from identity_revoked_tokens where expires_at < now() limit 100)`,
          );
        return;
      }
      if (!token.startsWith(REFRESH_PREFIX)) return;
      const hash = sha256Hex(token);
      await db.em().execute(
        `update identity_sessions set revoked_at = now(), revoked_reason = 'revoked'
          where (refresh_token_hash = ? or rotated_refresh_token_hashes @> array[?]::text[]) and project_id = ? and revoked_at is null`,
        [hash, hash, projectId],
      );
    },

    /** Revokes every session of a user except `keep` (password change) or all of them (reset). */
    async revokeUserSessions(userId: string, reason: string, keep?: string | null): Promise<void> {
      await db
        .em()
        .execute(
          `update identity_sessions set revoked_at = now(), revoked_reason = ? where user_id = ? and revoked_at is null and (?::uuid is null or id <> ?::uuid)`,
          [reason, userId, keep ?? null, keep ?? null],
        );
    },

    /** Checks an ID token this provider issued (for RP-initiated logout; an expired one is fine). */
    async verifyIdTokenHint(idToken: string): Promise<{ sid?: string; sub: string; aud: string; projectId?: string }> {
      const { payload } = await keys.verify(idToken, { typ: 'JWT', allowExpired: true });
      if (typeof payload.sub !== 'string' || typeof payload.aud !== 'string') throw errors.invalidToken();
      return { sid: typeof payload.sid === 'string' ? payload.sid : undefined, sub: payload.sub, aud: payload.aud };
    },
  };
}
