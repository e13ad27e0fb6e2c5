// REST rows of tenant management (`/auth/api/v1`): every row of the seed's table, plus the account,
// refresh, project read and OIDC client rows the dashboard needs. Fields are aliased to snake_case.
import type { RouteRow } from '../route-types.ts';

const TAG = 'Tenant management';

const PLAN_SUMMARY = 'plan { id name }';
/** Whether the install's operator suspended the project (the console shows it). */
const SUSPENSION = 'suspended_at: suspendedAt suspended_reason: suspendedReason';
const TENANT = `id email name mfa_enabled: mfaEnabled recovery_codes_remaining: recoveryCodesRemaining ${PLAN_SUMMARY} created_at: createdAt`;
const TENANT_SESSION = 'id created_at: createdAt last_used_at: lastUsedAt expires_at: expiresAt ip current';
const REAUTH = '`current_password`, or `totp_code` when MFA is on';
const PROJECT_LISTED = `id name api_key_prefix: apiKeyPrefix publishable_key_prefix: publishableKeyPrefix ${PLAN_SUMMARY} created_at: createdAt updated_at: updatedAt ${SUSPENSION}`;
const PROJECT = `id name api_key: apiKey api_key_prefix: apiKeyPrefix publishable_key: publishableKey publishable_key_prefix: publishableKeyPrefix ${PLAN_SUMMARY}
  created_at: createdAt updated_at: updatedAt ${SUSPENSION}`;
const CORS = `allowed_origins: allowedOrigins allowed_methods: allowedMethods allowed_headers: allowedHeaders exposed_headers: exposedHeaders max_age: maxAge
  allow_credentials: allowCredentials updated_at: updatedAt`;
const PLAN = `id name description price_cents_per_month: priceCentsPerMonth limits {
  max_projects: maxProjects max_storage_bytes: maxStorageBytes max_upload_bytes: maxUploadBytes
  max_database_rows: maxDatabaseRows max_database_bytes: maxDatabaseBytes
  max_function_invocations_per_month: maxFunctionInvocationsPerMonth max_requests_per_minute: maxRequestsPerMinute
  min_cron_interval_seconds: minCronIntervalSeconds max_cron_jobs: maxCronJobs
  max_concurrent_function_runs: maxConcurrentFunctionRuns max_async_invokes_per_run: maxAsyncInvokesPerRun
  max_queued_function_runs: maxQueuedFunctionRuns
  max_realtime_subscribers: maxRealtimeSubscribers max_pending_uploads: maxPendingUploads
  max_database_connections: maxDatabaseConnections database_cpu_seconds_per_minute: databaseCpuSecondsPerMinute
}`;
const SESSION = `access_token: accessToken refresh_token: refreshToken token_type: tokenType expires_in: expiresIn tenant { ${TENANT} }`;
const PUBLICATION = 'table enabled updated_at: updatedAt';
const BRANDING =
  'project_name: projectName logo_url: logoUrl brand_color: brandColor hosted_sign_up: hostedSignUp hosted_password_reset: hostedPasswordReset';
const LOGGED_REQUEST = 'at method route status duration_ms: durationMs request_id: requestId credential';
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
    description:
      'Body `{email, password, totp_code?, recovery_code?}`. With MFA on and no code: 401 MFA_REQUIRED; a wrong or used code: 401 INVALID_MFA_CODE. `recovery_code` (one of the codes shown when MFA was turned on, each usable once) stands in for a lost authenticator.',
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
    description:
      'Body `{code}`: a current code from the enrolled secret. Answers `{mfa_enabled, recovery_codes}`: ten recovery codes, shown this once.',
    tag: TAG,
    auth: 'tenant',
    operation:
      'mutation TenantMfaVerify($code: String!) { mfaVerify(code: $code) { mfa_enabled: mfaEnabled recovery_codes: recoveryCodes } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'tenant.mfa.disable',
    method: 'POST',
    path: '/auth/api/v1/tenant/mfa/disable',
    summary: 'Disable MFA',
    description:
      'Body `{code}`: a current, unused TOTP code, or an unused recovery code when the authenticator is lost. The recovery codes go too.',
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantMfaDisable($code: String!) { mfaDisable(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'tenant.mfa.recoveryCodes.regenerate',
    method: 'POST',
    path: '/auth/api/v1/tenant/mfa/recovery-codes',
    summary: 'Replace the MFA recovery codes',
    description:
      'Body `{code}`: a current TOTP code. Answers `{recovery_codes}`: ten new codes, shown this once; the previous ones stop working. 409 MFA_NOT_ENABLED without MFA.',
    tag: TAG,
    auth: 'tenant',
    operation:
      'mutation TenantRecoveryCodes($code: String!) { regenerateRecoveryCodes(code: $code) { recovery_codes: recoveryCodes } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'tenant.password.forgot',
    method: 'POST',
    path: '/auth/api/v1/tenant/password/forgot',
    summary: 'Mail a password reset link',
    description:
      'Body `{email}`. Always 202 `{"accepted": true}`, whether the address has an account or not; the mail carries a link (and token) that works once, for 1 hour. Every request counts: 429 RATE_LIMITED with Retry-After past 5 per address or 30 per client address in 15 minutes.',
    tag: TAG,
    auth: 'none',
    operation: 'mutation TenantPasswordForgot($email: String!) { accepted: requestPasswordReset(email: $email) }',
    status: 202,
    variables: { email: 'body.email' },
  },
  {
    id: 'tenant.password.reset',
    method: 'POST',
    path: '/auth/api/v1/tenant/password/reset',
    summary: 'Set a new password with a reset token',
    description:
      'Body `{token, new_password}`. Every session of the account ends (sign in again; with MFA on, a TOTP or recovery code is still needed). 400 INVALID_LINK for an unknown, expired or used token.',
    tag: TAG,
    auth: 'none',
    operation: 'mutation TenantPasswordReset($input: ResetPasswordInput!) { resetPassword(input: $input) }',
    status: 204,
    variables: { input: 'body' },
  },
  {
    id: 'tenant.password.change',
    method: 'POST',
    path: '/auth/api/v1/tenant/password',
    summary: 'Change the password',
    description: `Body \`{new_password}\` with ${REAUTH}. The account's other sessions end; this one stays. 400 VALIDATION_FAILED (field \`current_password\`) for a wrong password.`,
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantPasswordChange($input: ChangePasswordInput!) { changePassword(input: $input) }',
    status: 204,
    variables: { input: 'body' },
  },
  {
    id: 'tenant.email.change',
    method: 'POST',
    path: '/auth/api/v1/tenant/email',
    summary: 'Change the e-mail address (mails a confirmation link)',
    description: `Body \`{new_email}\` with ${REAUTH}. Always 202 \`{"accepted": true}\`: the new address gets a link valid for 24 hours, and the account's address changes when it is opened (POST /auth/api/v1/tenant/email/confirm). When the new address already has an account, that address is told instead.`,
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantEmailChange($input: EmailChangeInput!) { accepted: requestEmailChange(input: $input) }',
    status: 202,
    variables: { input: 'body' },
  },
  {
    id: 'tenant.email.confirm',
    method: 'POST',
    path: '/auth/api/v1/tenant/email/confirm',
    summary: 'Confirm a new e-mail address',
    description:
      'Body `{token}` from the confirmation mail; no credential needed (the token is the proof). Answers `{tenant}`; the old address is told. 400 INVALID_LINK for an unknown, expired or used token, 409 EMAIL_TAKEN if another account took the address meanwhile.',
    tag: TAG,
    auth: 'none',
    operation: `mutation TenantEmailConfirm($token: String!) { tenant: confirmEmailChange(token: $token) { ${TENANT} } }`,
    status: 200,
    variables: { token: 'body.token' },
  },
  {
    id: 'tenant.session.list',
    method: 'GET',
    path: '/auth/api/v1/tenant/sessions',
    summary: "The account's live sessions",
    description: "Most recently used first; `current` marks the caller's own.",
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantSessions { sessions { ${TENANT_SESSION} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'tenant.session.revoke',
    method: 'DELETE',
    path: '/auth/api/v1/tenant/sessions/:id',
    summary: 'End one session',
    description:
      "Its refresh and access tokens stop working at once. 404 for an unknown id or another account's session.",
    tag: TAG,
    auth: 'tenant',
    operation: 'mutation TenantSessionRevoke($id: ID!) { revokeSession(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  },
  {
    id: 'tenant.session.revokeAll',
    method: 'POST',
    path: '/auth/api/v1/tenant/sessions/revoke',
    summary: 'Sign out everywhere',
    description:
      'Body `{keep_current?}`: ends every session of the account (with `keep_current: true`, every other one). Answers `{revoked}`, how many ended.',
    tag: TAG,
    auth: 'tenant',
    operation:
      'mutation TenantSessionsRevoke($keepCurrent: Boolean) { revoked: revokeSessions(keepCurrent: $keepCurrent) }',
    status: 200,
    variables: { keepCurrent: 'body.keep_current' },
  },
  {
    id: 'tenant.account.delete',
    method: 'POST',
    path: '/auth/api/v1/tenant/delete',
    summary: 'Delete the account and every project it owns',
    description: `Body \`{confirm}\` (the account's e-mail address, typed out) with ${REAUTH}. Every project of the account is deleted first, as DELETE /auth/api/v1/projects/:id does (its database, files, functions, end-users and keys), then the account and its sessions. There is no undo. Answers \`{deleted_projects}\`.`,
    tag: TAG,
    auth: 'tenant',
    operation:
      'mutation TenantAccountDelete($input: DeleteAccountInput!) { deleteAccount(input: $input) { deleted_projects: deletedProjects } }',
    status: 200,
    variables: { input: 'body' },
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
    id: 'tenant.project.branding.get',
    method: 'GET',
    path: '/auth/api/v1/projects/:id/branding',
    summary: "The project's branding of the hosted sign-in pages",
    description:
      "How the identity provider's hosted end-user pages (`/authorize`, `/authorize/sign-up`, `/authorize/forgot-password`) present the project: " +
      'its name, `logo_url`, `brand_color`, and whether they offer sign-up (`hosted_sign_up`) and password reset (`hosted_password_reset`).',
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantProjectBrandingGet($id: ID!) { project(id: $id) { branding { ${BRANDING} } } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'tenant.project.branding.set',
    method: 'PUT',
    path: '/auth/api/v1/projects/:id/branding',
    summary: "Change the project's branding of the hosted sign-in pages",
    description:
      'Body `{logo_url?, brand_color?, hosted_sign_up?, hosted_password_reset?}`; omitted fields stay. `logo_url`: an absolute https:// URL ' +
      '(at most 2,048 characters, no user name or password), `brand_color`: `#rrggbb`; null or "" removes either. The name shown is the project\'s.',
    tag: TAG,
    auth: 'tenant',
    operation: `mutation TenantProjectBrandingSet($id: ID!, $input: ProjectBrandingInput!) { branding: setProjectBranding(projectId: $id, input: $input) { ${BRANDING} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  },
  {
    id: 'tenant.project.requests.list',
    method: 'GET',
    path: '/auth/api/v1/projects/:id/requests',
    summary: "The project's recent requests (request log)",
    description:
      'Newest first: time, method, route template, status, latency, request id and the kind of credential (`secret_key`, `publishable_key`, ' +
      '`client_token`, `user_token`, `tenant_token`, `anonymous`); never a body, header, key or token. The newest `TESSERA_REQUEST_LOG_ROWS` ' +
      '(default 1,000) rows per project are kept; rows appear about a second after the request. Query `status` (`2xx`, `3xx`, `4xx`, `5xx`), ' +
      '`route` (text the route contains), `credential`, `first` (1-200, default 50) and `after` (the `next_cursor` of the previous page). ' +
      "The owning tenant only: the project's own keys are refused (403).",
    tag: TAG,
    auth: 'tenant',
    operation: `query TenantProjectRequests($id: ID!, $first: Int, $after: String, $status: String, $route: String, $credential: String) {
      projectRequests(projectId: $id, first: $first, after: $after, status: $status, route: $route, credential: $credential) {
        requests: items { ${LOGGED_REQUEST} } next_cursor: nextCursor
      }
    }`,
    status: 200,
    variables: {
      id: 'params.id',
      first: 'query.first',
      after: 'query.after',
      status: 'query.status',
      route: 'query.route',
      credential: 'query.credential',
    },
    unwrap: true,
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
