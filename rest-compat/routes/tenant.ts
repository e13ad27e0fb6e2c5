// REST rows of tenant management (`/auth/api/v1`): every row of the seed's table, plus the account,
// refresh, project read and OIDC client rows the dashboard needs. Fields are aliased to snake_case.
import type { RouteRow } from '../route-types.ts';

const TAG = 'Tenant management';

const PLAN_SUMMARY = 'plan { id name }';
const TENANT = `id email name mfa_enabled: mfaEnabled ${PLAN_SUMMARY} created_at: createdAt`;
const PROJECT_LISTED = `id name api_key_prefix: apiKeyPrefix publishable_key_prefix: publishableKeyPrefix ${PLAN_SUMMARY} created_at: createdAt updated_at: updatedAt`;
const PROJECT = `id name api_key: apiKey api_key_prefix: apiKeyPrefix publishable_key: publishableKey publishable_key_prefix: publishableKeyPrefix ${PLAN_SUMMARY}
  created_at: createdAt updated_at: updatedAt`;
const CORS = `allowed_origins: allowedOrigins allowed_methods: allowedMethods allowed_headers: allowedHeaders exposed_headers: exposedHeaders max_age: maxAge
  allow_credentials: allowCredentials updated_at: updatedAt`;
const PLAN = `id name description price_cents_per_month: priceCentsPerMonth limits {
  max_projects: maxProjects max_storage_bytes: maxStorageBytes max_upload_bytes: maxUploadBytes
  max_database_rows: maxDatabaseRows max_function_invocations_per_month: maxFunctionInvocationsPerMonth
  max_requests_per_minute: maxRequestsPerMinute
}`;
const SESSION = `access_token: accessToken refresh_token: refreshToken token_type: tokenType expires_in: expiresIn tenant { ${TENANT} }`;
const PUBLICATION = 'table enabled updated_at: updatedAt';
const OIDC_CLIENT =
  'client_id: clientId client_secret: clientSecret name redirect_uris: redirectUris grant_types: grantTypes allowed_scopes: allowedScopes public default created_at: createdAt';
const GRANT_TYPES_DOC =
  '`grant_types` among `password`, `authorization_code`, `client_credentials`, `refresh_token` (a public client cannot have `client_credentials`)';

export const tenantRoutes: RouteRow[] = [
  {
    id: 'tenant.account.signup',
    method: 'POST',
    path: '/auth/api/v1/tenants/signup',
    summary: 'Create a developer account',
    description:
      'Body `{email, password, name?}`; the password needs at least 8 characters. 409 EMAIL_TAKEN when the address is registered.',
    tag: TAG,
    auth: 'none',
    operation: `mutation TenantSignup($input: SignupInput!) { signup(input: $input) { tenant { ${TENANT} } } }`,
    status: 201,
    variables: { input: 'body' },
    unwrap: true,
  },
  {
    id: 'tenant.session.login',
    method: 'POST',
    path: '/auth/api/v1/tenant/login',
    summary: 'Sign in; the response carries tokens',
    description: 'Body `{email, password, totp_code?}`. With MFA on and no code: 401 MFA_REQUIRED.',
    tag: TAG,
    auth: 'none',
    operation: `mutation TenantLogin($input: LoginInput!) { login(input: $input) { ${SESSION} } }`,
    status: 200,
    variables: { input: 'body' },
    unwrap: true,
  },
  {
    id: 'tenant.session.refresh',
    method: 'POST',
    path: '/auth/api/v1/tenant/refresh',
    summary: 'Trade a refresh token for new tokens',
    description:
      'Body `{refresh_token}`. The old refresh token stops working; presenting it again revokes the session.',
    tag: TAG,
    auth: 'none',
    operation: `mutation TenantRefresh($refreshToken: String!) { refreshSession(refreshToken: $refreshToken) { ${SESSION} } }`,
    status: 200,
    variables: { refreshToken: 'body.refresh_token' },
    unwrap: true,
  },
  {
    id: 'tenant.session.logout',
    method: 'POST',
    path: '/auth/api/v1/tenant/logout',
    summary: 'Sign out',
    description: "Revokes the caller's session: its access and refresh tokens stop working at once.",
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantLogout { logout }',
    status: 204,
    variables: {},
  },
  {
    id: 'tenant.mfa.enroll',
    method: 'POST',
    path: '/auth/api/v1/tenant/mfa/enroll',
    summary: 'Enroll TOTP MFA',
    description: 'Returns `{secret, otpauth_url}`; MFA is on only after /mfa/verify.',
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantMfaEnroll { mfaEnroll { secret otpauth_url: otpauthUrl } }',
    status: 200,
    variables: {},
    unwrap: true,
  },
  {
    id: 'tenant.mfa.verify',
    method: 'POST',
    path: '/auth/api/v1/tenant/mfa/verify',
    summary: 'Activate MFA',
    description: 'Body `{code}`: a current code from the enrolled secret.',
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantMfaVerify($code: String!) { mfaVerify(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'tenant.mfa.disable',
    method: 'POST',
    path: '/auth/api/v1/tenant/mfa/disable',
    summary: 'Disable MFA',
    description: 'Body `{code}`: a current, unused code.',
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantMfaDisable($code: String!) { mfaDisable(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'tenant.account.get',
    method: 'GET',
    path: '/auth/api/v1/tenant',
    summary: 'The signed-in developer account',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantMe { tenant: me { ${TENANT} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'tenant.project.list',
    method: 'GET',
    path: '/auth/api/v1/projects',
    summary: 'List projects',
    description:
      'Oldest first. Query `first` (1-100, default 20) and `after` (the `next_cursor` of the previous page).',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantProjectList($first: Int, $after: String) {
      projects(first: $first, after: $after) { projects: items { ${PROJECT_LISTED} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: { first: 'query.first', after: 'query.after' },
    unwrap: true,
  },
  {
    id: 'tenant.project.create',
    method: 'POST',
    path: '/auth/api/v1/projects',
    summary: 'Create project',
    description:
      "Body `{name}`. Answers the project with its `api_key`. 409 PLAN_LIMIT_REACHED past the plan's project count.",
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectCreate($input: CreateProjectInput!) { project: createProject(input: $input) { ${PROJECT} } }`,
    status: 201,
    variables: { input: 'body' },
  },
  {
    id: 'tenant.project.get',
    method: 'GET',
    path: '/auth/api/v1/projects/:id',
    summary: 'Get a project with its API key',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantProjectGet($id: ID!) { project(id: $id) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
  },
  {
    id: 'tenant.project.rename',
    method: 'PUT',
    path: '/auth/api/v1/projects/:id',
    summary: 'Rename project',
    description: 'Body `{name}`.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectRename($id: ID!, $input: RenameProjectInput!) { project: renameProject(id: $id, input: $input) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  },
  {
    id: 'tenant.project.delete',
    method: 'DELETE',
    path: '/auth/api/v1/projects/:id',
    summary: 'Delete project',
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantProjectDelete($id: ID!) { deleteProject(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  },
  {
    id: 'tenant.project.key.regenerate',
    method: 'POST',
    path: '/auth/api/v1/projects/:id/regenerate-key',
    summary: 'Regenerate the project API key',
    description: 'The old key is refused from the next request on.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectKeyRegenerate($id: ID!) { project: regenerateProjectKey(id: $id) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
  },
  {
    id: 'tenant.project.publishableKey.regenerate',
    method: 'POST',
    path: '/auth/api/v1/projects/:id/regenerate-publishable-key',
    summary: 'Regenerate the publishable key',
    description:
      'The publishable key (`tpk_...`) is what web pages and apps send as `X-Api-Key`; the old one is refused from the next request on.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectPublishableKeyRegenerate($id: ID!) { project: regeneratePublishableKey(id: $id) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
  },
  {
    id: 'tenant.project.cors.get',
    method: 'GET',
    path: '/auth/api/v1/projects/:id/cors',
    summary: "The project's CORS rule",
    description:
      'Which web origins may call the project from a browser. `allowed_origins` empty: no rule (only `TESSERA_CORS_ORIGINS` applies).',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantProjectCorsGet($id: ID!) { project(id: $id) { cors { ${CORS} } } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'tenant.project.cors.set',
    method: 'PUT',
    path: '/auth/api/v1/projects/:id/cors',
    summary: "Replace the project's CORS rule",
    description:
      'Body `{allowed_origins, allowed_methods?, allowed_headers?, exposed_headers?, max_age?, allow_credentials?}`: exact origins (`https://app.example.com`) ' +
      'or `*`; `allow_credentials` is refused with `*`. An empty `allowed_origins` removes the rule. Takes effect at once on every front door.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectCorsSet($id: ID!, $input: ProjectCorsInput!) { cors: setProjectCors(projectId: $id, input: $input) { ${CORS} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  },
  {
    id: 'tenant.publication.list',
    method: 'GET',
    path: '/auth/api/v1/projects/:id/publications',
    summary: 'List tables with realtime enabled',
    description: 'Every table with a realtime setting, with its `enabled` switch.',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantPublicationList($id: ID!) { project(id: $id) { publications { ${PUBLICATION} } } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'tenant.publication.set',
    method: 'POST',
    path: '/auth/api/v1/projects/:id/publications',
    summary: 'Toggle realtime for a table',
    description: 'Body `{table, enabled}`; `table` is a plain table name (no schema), at most 63 characters.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantPublicationSet($projectId: ID!, $input: SetPublicationInput!) {
      publication: setPublication(projectId: $projectId, input: $input) { ${PUBLICATION} }
    }`,
    status: 200,
    variables: { projectId: 'params.id', input: 'body' },
  },
  {
    id: 'tenant.oidcClient.list',
    method: 'GET',
    path: '/auth/api/v1/projects/:id/oidc-clients',
    summary: "List the project's OIDC clients with their secrets",
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantOidcClientList($id: ID!) { project(id: $id) { oidc_clients: oidcClients { ${OIDC_CLIENT} } } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'tenant.oidcClient.create',
    method: 'POST',
    path: '/auth/api/v1/projects/:id/oidc-clients',
    summary: 'Add an OIDC client to a project',
    description:
      'Body `{name, redirect_uris?, grant_types?, allowed_scopes?, public?}`. ' +
      GRANT_TYPES_DOC +
      '; default all four (without `client_credentials` for a public client). `allowed_scopes` default `openid profile email phone offline_access role:*`. ' +
      'Answers the client with its `client_secret`. 400 VALIDATION_FAILED naming the field; 409 PLAN_LIMIT_REACHED past 20 clients per project.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantOidcClientCreate($projectId: ID!, $input: CreateOidcClientInput!) {
      oidc_client: createOidcClient(projectId: $projectId, input: $input) { ${OIDC_CLIENT} }
    }`,
    status: 201,
    variables: { projectId: 'params.id', input: 'body' },
  },
  {
    id: 'tenant.oidcClient.update',
    method: 'PUT',
    path: '/auth/api/v1/projects/:id/oidc-clients/:client_id',
    summary: 'Change an OIDC client: name, redirect URIs, grant types, allowed scopes, public or confidential',
    description:
      'Body `{name?, redirect_uris?, grant_types?, public?, allowed_scopes?}`; omitted fields stay, and the result is checked as at creation. ' +
      GRANT_TYPES_DOC +
      '. Redirect URIs are absolute http(s) URLs without fragments. A public client (browser or native app) authenticates with client_id alone and must use PKCE. ' +
      '`allowed_scopes` replaces the scopes the client may be issued (anything else asked of /token is `invalid_scope`): e.g. `openid`, `orders:read`, `role:*` (role scopes, only for roles assigned to the end-user), admin scopes (`admin`, `admin:sql`, `admin:functions`, `admin:secrets`, `admin:email`, `admin:storage`, `admin:users`; not for public clients).',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantOidcClientUpdate($projectId: ID!, $clientId: String!, $input: UpdateOidcClientInput!) {
      oidc_client: updateOidcClient(projectId: $projectId, clientId: $clientId, input: $input) { ${OIDC_CLIENT} }
    }`,
    status: 200,
    variables: { projectId: 'params.id', clientId: 'params.client_id', input: 'body' },
  },
  {
    id: 'tenant.oidcClient.secret.rotate',
    method: 'POST',
    path: '/auth/api/v1/projects/:id/oidc-clients/:client_id/rotate-secret',
    summary: 'Give an OIDC client a new secret',
    description: 'The old secret stops working at once.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantOidcClientSecretRotate($projectId: ID!, $clientId: String!) {
      oidc_client: rotateOidcClientSecret(projectId: $projectId, clientId: $clientId) { ${OIDC_CLIENT} }
    }`,
    status: 200,
    variables: { projectId: 'params.id', clientId: 'params.client_id' },
  },
  {
    id: 'tenant.oidcClient.delete',
    method: 'DELETE',
    path: '/auth/api/v1/projects/:id/oidc-clients/:client_id',
    summary: 'Delete an OIDC client',
    description:
      "Any client may go, the default one too, but not the project's last (409 CONFLICT). Its secret stops working at once; its end-user sessions end and the access tokens issued to it are refused.",
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantOidcClientDelete($projectId: ID!, $clientId: String!) {
      deleteOidcClient(projectId: $projectId, clientId: $clientId)
    }`,
    status: 204,
    variables: { projectId: 'params.id', clientId: 'params.client_id' },
  },
  {
    id: 'tenant.plan.list',
    method: 'GET',
    path: '/auth/api/v1/plans',
    summary: 'List plans',
    tag: TAG,
    auth: 'none',
    operation: `query TenantPlanList { plans { ${PLAN} } }`,
    status: 200,
    variables: {},
  },
];
