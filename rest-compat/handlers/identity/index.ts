// The identity provider's wire endpoints, one file per group like node-oidc-provider's actions: discovery and
// JWKS, /authorize with its hosted sign-in page, /token, /introspect and /revocation, /userinfo, RP-initiated
// /logout, and the pages behind the links of reset and verification mails. They speak the OAuth/OIDC formats
// (form bodies, RFC 6749 errors; oauth.ts holds what they share) and reach the identity and tenant domains only
// through the operations of platform/internal-operations.ts. The JSON endpoints of end-users (/register, /mfa/*,
// /password/change, ...) are rows of rest-compat/routes/identity.ts.
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../platform/errors.ts';
import type { RawHandlerDeps, RawHandlerModule } from '../types.ts';
import { authorize } from './authorize.ts';
import { discovery } from './discovery.ts';
import { emailLinks } from './email-links.ts';
import { hostedAccounts } from './hosted-accounts.ts';
import { introspection } from './introspection.ts';
import { logout } from './logout.ts';
import { OAuthFailure, invalidRequest, sendOAuthError, type EndpointGroup } from './oauth.ts';
import { errorPage } from './pages.ts';
import { tokenEndpoint } from './token.ts';
import { userinfoEndpoint } from './userinfo.ts';

export { CLAIMS_SUPPORTED, SCOPES_SUPPORTED, discoveryDocument } from './discovery.ts';

/** In the order of the OpenAPI document. */
const GROUPS: readonly EndpointGroup[] = [
  discovery,
  authorize,
  hostedAccounts,
  tokenEndpoint,
  userinfoEndpoint,
  introspection,
  logout,
  emailLinks,
];

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
      if (oauthPath && err instanceof AppError && err.status < 500)
        return sendOAuthError(reply, invalidRequest(err.message));
      if (oauthPath && !(err instanceof AppError) && typeof e.statusCode === 'number' && e.statusCode < 500) {
        return sendOAuthError(reply, invalidRequest(`The request body is malformed: ${e.message}`));
      }
      if (oauthPath) {
        req.log.error({ err }, 'token endpoint failed');
        return sendOAuthError(reply, new OAuthFailure(500, 'server_error', 'Internal error'));
      }
      if (req.url.startsWith('/authorize') && !(err instanceof AppError)) {
        req.log.error({ err }, 'authorization endpoint failed');
        return errorPage(
          reply,
          typeof e.statusCode === 'number' && e.statusCode < 500 ? 400 : 500,
          'The sign-in request could not be processed.',
        );
      }
      return deps.sendError(reply, err);
    });
    for (const group of GROUPS) group.register(scope, deps);
  });
}

export const identityHandlers: RawHandlerModule = {
  name: 'identity',
  register,
  openapi: Object.assign({}, ...GROUPS.map((g) => g.openapi)) as RawHandlerModule['openapi'],
};
