// The grants of the token endpoint and the authorization code of /authorize, as small named steps.
// The caller (the /token and /authorize handlers) has already authenticated the client with the tenant
// subgraph and passes what it vouched for (ClientFacts); only the internal principal may call these.
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { randomToken, safeEqual, sha256Hex } from '../../../platform/crypto.ts';
import type { EndUser } from '../entities/index.ts';
import type { ClientFacts, ServiceDeps } from './context.ts';
import type { MfaService } from './mfa.ts';
import { oauthError } from './oauth-errors.ts';
import type { TokenService, TokenSet } from './tokens.ts';
import type { UserService } from './users.ts';
import { parseScope } from './validation.ts';
import { clientScopes, refreshedScopes, userScopes } from './scopes.ts';

const CODE_PREFIX = 'tac_';
const CODE_TTL_MS = 60_000;
// RFC 7636 §4.1: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~]
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export type GrantInput = {
  grantType: string;
  username?: string | null;
  password?: string | null;
  totpCode?: string | null;
  scope?: string | null;
  code?: string | null;
  redirectUri?: string | null;
  codeVerifier?: string | null;
  refreshToken?: string | null;
};

export type AuthorizeInput = {
  email?: string | null;
  password?: string | null;
  totpCode?: string | null;
  redirectUri: string;
  scope?: string | null;
  nonce?: string | null;
  codeChallenge?: string | null;
  codeChallengeMethod?: string | null;
};

type Deps = Pick<ServiceDeps, 'db' | 'logger'> & { users: UserService; mfa: MfaService; tokens: TokenService };

export type GrantService = ReturnType<typeof createGrantService>;

function requireGrant(client: ClientFacts, grant: string): void {
  if (!client.grantTypes.includes(grant))
    throw oauthError('unauthorized_client', `This client may not use the ${grant} grant`);
}

/** Checks the authorization request parameters that do not depend on the user (shared by GET and POST /authorize). */
export function checkAuthorizationRequest(
  client: ClientFacts,
  input: Pick<AuthorizeInput, 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
): string[] {
  if (!client.redirectUris.includes(input.redirectUri))
    throw oauthError('invalid_request', 'redirect_uri is not registered for this client');
  requireGrant(client, 'authorization_code');
  const scopes = parseScope(input.scope);
  const method = input.codeChallengeMethod ?? (input.codeChallenge ? 'plain' : null);
  if (input.codeChallenge) {
    if (method !== 'S256') throw oauthError('invalid_request', 'code_challenge_method must be S256');
    if (!PKCE_VALUE.test(input.codeChallenge))
      throw oauthError('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  } else if (input.codeChallengeMethod) {
    throw oauthError('invalid_request', 'code_challenge_method without code_challenge');
  } else if (client.public) {
    throw oauthError(
      'invalid_request',
      'PKCE is required for public clients: send code_challenge with code_challenge_method=S256',
    );
  }
  // The user is not known yet: their roles are checked once they have signed in (`authorize`).
  return userScopes(client, scopes, null);
}

export function createGrantService({ db, logger, users, mfa, tokens }: Deps) {
  /** Password and, when MFA is on, a TOTP code: the user and the methods used. */
  async function signIn(
    client: ClientFacts,
    email: unknown,
    password: unknown,
    totpCode: unknown,
    ip?: string,
  ): Promise<{ user: EndUser; amr: string[] }> {
    const user = await users.verifyCredentials(client.projectId, email, password, ip);
    const usedOtp = await mfa.checkSignIn(user, totpCode);
    users.signedIn(user);
    return { user, amr: usedOtp ? ['pwd', 'otp', 'mfa'] : ['pwd'] };
  }

  async function passwordGrant(client: ClientFacts, input: GrantInput, ip?: string): Promise<TokenSet> {
    requireGrant(client, 'password');
    if (!input.username) throw oauthError('invalid_request', 'username is required');
    if (!input.password) throw oauthError('invalid_request', 'password is required');
    const requested = parseScope(input.scope);
    userScopes(client, requested, null); // a request no user could get is refused before any password is checked
    const { user, amr } = await signIn(client, input.username, input.password, input.totpCode, ip);
    const scopes = userScopes(client, requested, user.roles);
    const { session, refreshToken } = await tokens.startSession(user, client, {
      scopes,
      amr,
      authTime: new Date(),
      ip,
    });
    return await tokens.issueForSession(session, user, refreshToken);
  }

  async function clientCredentialsGrant(client: ClientFacts, input: GrantInput): Promise<TokenSet> {
    if (client.public) throw oauthError('unauthorized_client', 'A public client cannot use client_credentials');
    requireGrant(client, 'client_credentials');
    const scopes = clientScopes(client, parseScope(input.scope));
    return await tokens.issueClientToken(client, scopes);
  }

  async function refreshTokenGrant(client: ClientFacts, input: GrantInput): Promise<TokenSet> {
    requireGrant(client, 'refresh_token');
    if (!input.refreshToken) throw oauthError('invalid_request', 'refresh_token is required');
    const requested = parseScope(input.scope);
    const grantedOf = (s: { scope: string }) => s.scope.split(' ').filter(Boolean);
    const { session, refreshToken } = await tokens.rotateRefreshToken(client, input.refreshToken, (s) => {
      const extra = requested.find((r) => !grantedOf(s).includes(r));
      if (extra) throw oauthError('invalid_scope', `scope "${extra}" was not granted to this refresh token`);
    });
    const user = await users.load(session.userId);
    if (!user) throw oauthError('invalid_grant', 'The account no longer exists');
    const scopes = refreshedScopes(client, grantedOf(session), requested, user.roles);
    return await tokens.issueForSession(session, user, refreshToken, { scopes });
  }

  /**
   * Redeems a code once. The claim is one conditional UPDATE; a second redemption fails and revokes the
   * session (and so every token) the first one started.
   */
  async function authorizationCodeGrant(client: ClientFacts, input: GrantInput, ip?: string): Promise<TokenSet> {
    requireGrant(client, 'authorization_code');
    if (!input.code) throw oauthError('invalid_request', 'code is required');
    if (!input.redirectUri) throw oauthError('invalid_request', 'redirect_uri is required');
    const hash = sha256Hex(input.code);
    const em = db.em();
    type CodeRow = {
      project_id: string;
      client_id: string;
      user_id: string;
      redirect_uri: string;
      scope: string;
      nonce: string | null;
      code_challenge: string | null;
      amr: string[];
      auth_time: Date;
      expires_at: Date;
    };
    const rows = await em.execute<CodeRow[]>(
      `update identity_authorization_codes set used_at = now() where code_hash = ? and used_at is null
        returning project_id, client_id, user_id, redirect_uri, scope, nonce, code_challenge, amr, auth_time, expires_at`,
      [hash],
    );
    const code = rows[0];
    if (!code) {
      const used = await em.execute<{ session_id: string | null }[]>(
        'select session_id from identity_authorization_codes where code_hash = ? and used_at is not null',
        [hash],
      );
      if (used[0]) {
        if (used[0].session_id) await tokens.revokeSession(used[0].session_id, 'authorization_code_replay');
        logger.warn(
          { clientId: client.clientId },
          'authorization code presented twice: tokens of the first use revoked',
        );
        throw oauthError('invalid_grant', 'The authorization code was already used; the tokens it gave are revoked');
      }
      throw oauthError('invalid_grant', 'The authorization code is invalid');
    }
    if (code.client_id !== client.clientId || code.project_id !== client.projectId)
      throw oauthError('invalid_grant', 'The authorization code was issued to another client');
    if (new Date(code.expires_at).getTime() < Date.now())
      throw oauthError('invalid_grant', 'The authorization code has expired');
    if (code.redirect_uri !== input.redirectUri)
      throw oauthError('invalid_grant', 'redirect_uri does not match the authorization request');
    if (code.code_challenge) {
      if (!input.codeVerifier || !PKCE_VALUE.test(input.codeVerifier))
        throw oauthError('invalid_grant', 'code_verifier is missing or malformed');
      const computed = crypto.createHash('sha256').update(input.codeVerifier, 'ascii').digest('base64url');
      if (!safeEqual(computed, code.code_challenge))
        throw oauthError('invalid_grant', 'code_verifier does not match the code_challenge');
    } else if (input.codeVerifier) {
      throw oauthError('invalid_grant', 'code_verifier sent, but the authorization request had no code_challenge');
    } else if (client.public) {
      throw oauthError('invalid_grant', 'PKCE is required for public clients');
    }
    const user = await users.load(code.user_id);
    if (!user) throw oauthError('invalid_grant', 'The account no longer exists');
    if (user.disabledAt) throw oauthError('invalid_grant', 'The account is disabled');
    // Roles were checked at sign-in; one taken away since then is not issued.
    const scopes = refreshedScopes(client, code.scope.split(' ').filter(Boolean), [], user.roles);
    const { session, refreshToken } = await tokens.startSession(user, client, {
      scopes,
      amr: code.amr,
      authTime: new Date(code.auth_time),
      ip,
    });
    await em.execute('update identity_authorization_codes set session_id = ? where code_hash = ?', [session.id, hash]);
    return await tokens.issueForSession(session, user, refreshToken, { nonce: code.nonce });
  }

  return {
    /** The token endpoint: one grant, for a client the caller authenticated. */
    async token(client: ClientFacts, input: GrantInput, ip?: string): Promise<TokenSet> {
      if (!input.grantType) throw oauthError('invalid_request', 'grant_type is required');
      switch (input.grantType) {
        case 'password':
          return await passwordGrant(client, input, ip);
        case 'client_credentials':
          return await clientCredentialsGrant(client, input);
        case 'refresh_token':
          return await refreshTokenGrant(client, input);
        case 'authorization_code':
          return await authorizationCodeGrant(client, input, ip);
        default:
          throw oauthError(
            'unsupported_grant_type',
            `grant_type "${String(input.grantType).slice(0, 50)}" is not supported`,
          );
      }
    },

    /** The hosted sign-in page's submission: checks the user and returns a single-use authorization code. */
    async authorize(client: ClientFacts, input: AuthorizeInput, ip?: string): Promise<{ code: string }> {
      const scopes = checkAuthorizationRequest(client, input);
      if (!input.email || !input.password) throw errors.validation(!input.email ? 'email' : 'password', 'is required');
      if (typeof input.nonce === 'string' && input.nonce.length > 512)
        throw oauthError('invalid_request', 'nonce is longer than 512 characters');
      const { user, amr } = await signIn(client, input.email, input.password, input.totpCode, ip);
      userScopes(client, scopes, user.roles);
      const code = randomToken(CODE_PREFIX);
      const now = new Date();
      await db.em().execute(
        `insert into identity_authorization_codes
           (code_hash, project_id, client_id, user_id, redirect_uri, scope, nonce, code_challenge, code_challenge_method, amr, auth_time, expires_at, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          sha256Hex(code),
          client.projectId,
          client.clientId,
          user.id,
          input.redirectUri,
          scopes.join(' '),
          input.nonce ?? null,
          input.codeChallenge ?? null,
          input.codeChallenge ? 'S256' : null,
          `{${amr.join(',')}}`,
          now,
          new Date(now.getTime() + CODE_TTL_MS),
          now,
        ],
      );
      // Codes are worth keeping a day after use (replay detection); older ones go, a few at a time.
      await db
        .em()
        .execute(
          `delete from identity_authorization_codes where code_hash in (select code_hash from identity_authorization_codes where expires_at < now() - interval '1 day' limit 100)`,
        );
      return { code };
    },
  };
}
