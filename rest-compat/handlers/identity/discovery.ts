// Discovery and keys: the provider's metadata (OIDC Discovery 1.0, RFC 8414) and its public signing keys (JWKS).
import { INTERNAL_OPERATIONS, callInternal } from '../../../platform/internal-operations.ts';
import { PROFILE_CLAIMS } from '../../../platform/oidc-claims.ts';
import { internalContext, json, op, type EndpointGroup } from './oauth.ts';

export const SCOPES_SUPPORTED = ['openid', 'profile', 'email', 'phone', 'offline_access'];
export const CLAIMS_SUPPORTED = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'at_hash',
  'sid',
  'amr',
  ...PROFILE_CLAIMS.filter((c) => c !== 'phone_number'),
  'updated_at',
  'email',
  'email_verified',
  'phone_number',
];
const GRANT_TYPES = ['authorization_code', 'password', 'client_credentials', 'refresh_token'];

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

export const discovery: EndpointGroup = {
  register(scope, deps) {
    scope.get('/.well-known/openid-configuration', async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(discoveryDocument(deps.config.issuer)),
    );
    scope.get('/.well-known/oauth-authorization-server', async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(discoveryDocument(deps.config.issuer)),
    );
    scope.get('/jwks.json', async (req, reply) => {
      // An error is answered in the REST error shape (the scope's error handler), not as an OAuth error.
      const keys = (await callInternal(deps, INTERNAL_OPERATIONS.jwks, {}, internalContext(req))).identitySigningKeys;
      return reply.header('cache-control', 'public, max-age=60').type('application/jwk-set+json').send({ keys });
    });
  },
  openapi: {
    '/.well-known/openid-configuration': {
      get: op('identity.discovery', 'OIDC discovery', {
        description:
          'The OpenID Provider metadata (issuer, every endpoint that exists, grant types, scopes, signing algorithms). Public.',
        responses: { 200: json('The provider metadata') },
      }),
    },
    '/jwks.json': {
      get: op('identity.jwks', 'Public signing keys', {
        description:
          'The public keys (JWK set, by `kid`) that sign access and ID tokens, the current and the previous ones during a rotation. Public, cacheable for 60 s.',
        responses: {
          200: {
            description: 'JWK set `{"keys": [...]}`',
            content: {
              'application/jwk-set+json': {
                schema: {
                  type: 'object',
                  required: ['keys'],
                  properties: { keys: { type: 'array', items: { type: 'object' } } },
                },
              },
            },
          },
        },
      }),
    },
  },
};
