// REST rows of the identity provider's JSON endpoints for end-users (gateway root, no version segment).
// The OAuth/OIDC wire endpoints (/token, /authorize, /userinfo, ...) are hand-written handlers in
// rest-compat/handlers/identity/. Fields are aliased to snake_case (OIDC claim names).
import type { RouteRow } from '../route-types.ts';

const TAG = 'Identity provider';

export const END_USER = `id project_id: projectId email email_verified: emailVerified name given_name: givenName family_name: familyName
  middle_name: middleName nickname preferred_username: preferredUsername picture website gender birthdate zoneinfo locale
  phone_number: phoneNumber mfa_enabled: mfaEnabled created_at: createdAt updated_at: updatedAt`;

const endUserRoutes: RouteRow[] = [
  {
    id: 'identity.user.register',
    method: 'POST',
    path: '/register',
    summary: 'Register a new end-user',
    description:
      'Needs the project API key (X-Api-Key). Body `{email, password, name?, given_name?, family_name?, middle_name?, nickname?, preferred_username?, picture?, website?, gender?, birthdate?, zoneinfo?, locale?, phone_number?}`. ' +
      'Password: 8 to 1024 characters, not the e-mail, not one repeated character. 409 EMAIL_TAKEN when the address is registered in the project. The e-mail starts unverified. 429 with Retry-After past the rate limit.',
    tag: TAG,
    auth: 'project',
    operation: `mutation IdentityRegister($input: RegisterEndUserInput!) { user: registerEndUser(input: $input) { ${END_USER} } }`,
    status: 201,
    variables: { input: 'body' },
  },
  {
    id: 'identity.mfa.enroll',
    method: 'POST',
    path: '/mfa/enroll',
    summary: 'Enroll TOTP MFA (end-user)',
    description: 'Needs an end-user access token. Returns `{secret, otpauth_url}`; MFA is on only after /mfa/verify.',
    tag: TAG,
    auth: 'user',
    operation: 'mutation IdentityMfaEnroll { endUserMfaEnroll { secret otpauth_url: otpauthUrl } }',
    status: 200,
    variables: {},
    unwrap: true,
  },
  {
    id: 'identity.mfa.verify',
    method: 'POST',
    path: '/mfa/verify',
    summary: 'Activate MFA (end-user)',
    description:
      'Body `{code}`: a current code from the enrolled secret. From then on the password grant and the sign-in page need `totp_code`.',
    tag: TAG,
    auth: 'user',
    operation:
      'mutation IdentityMfaVerify($code: String!) { endUserMfaVerify(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'identity.mfa.disable',
    method: 'POST',
    path: '/mfa/disable',
    summary: 'Disable MFA (end-user)',
    description: 'Body `{code}`: a current, unused code.',
    tag: TAG,
    auth: 'user',
    operation:
      'mutation IdentityMfaDisable($code: String!) { endUserMfaDisable(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'identity.password.reset.request',
    method: 'POST',
    path: '/password/reset/request',
    summary: 'Request a password reset e-mail',
    description:
      'Needs the project API key. Body `{email}`. Always 202 `{"accepted": true}`, whether the address is registered or not; the mail carries a single-use token valid for 1 hour. 429 with Retry-After past the rate limit.',
    tag: TAG,
    auth: 'project',
    operation:
      'mutation IdentityResetRequest($email: String!) { accepted: requestEndUserPasswordReset(email: $email) }',
    status: 202,
    variables: { email: 'body.email' },
  },
  {
    id: 'identity.password.change',
    method: 'POST',
    path: '/password/change',
    summary: 'Change password (authenticated end-user)',
    description: 'Body `{current_password, new_password}`. Every other session of the user is revoked; this one stays.',
    tag: TAG,
    auth: 'user',
    operation:
      'mutation IdentityPasswordChange($input: ChangeEndUserPasswordInput!) { changeEndUserPassword(input: $input) }',
    status: 204,
    variables: { input: 'body' },
  },
  {
    id: 'identity.email.verify.request',
    method: 'POST',
    path: '/email/verify/request',
    summary: 'Request e-mail verification',
    description:
      'With an end-user access token: mails the signed-in user (no body). With the project API key: body `{email}`. Always 202 `{"accepted": true}`.',
    tag: TAG,
    auth: 'any',
    operation:
      'mutation IdentityVerifyRequest($email: String) { accepted: requestEndUserEmailVerification(email: $email) }',
    status: 202,
    variables: { email: 'body.email' },
  },
  {
    id: 'identity.session.logout',
    method: 'POST',
    path: '/logout',
    summary: 'Revoke the session and its refresh token',
    description:
      'Needs the end-user access token of the session. Its access tokens and refresh token stop working at once. (GET /logout is the OIDC end_session_endpoint.)',
    tag: TAG,
    auth: 'user',
    operation: 'mutation IdentityLogout { endUserLogout }',
    status: 204,
    variables: {},
  },
];

// The end-user admin API (`/admin/users`): the project's secret API key, or a client_credentials token of a
// client granted `admin:users` (or `admin`); anything else is refused by the executor (platform/admin-scopes.ts).
const ADMIN_USER = `${END_USER} roles app_metadata: appMetadata disabled disabled_at: disabledAt`;
const ADMIN =
  'End-user admin API: needs the project secret API key (X-Api-Key) or a client_credentials token granted `admin:users` (or `admin`); end-user tokens get 403.';

const adminRow = (r: Omit<RouteRow, 'tag' | 'auth'>): RouteRow => ({
  tag: TAG,
  auth: 'project',
  ...r,
  description: `${ADMIN} ${r.description ?? ''}`.trim(),
});

const adminUserRoutes: RouteRow[] = [
  adminRow({
    id: 'identity.admin.user.create',
    method: 'POST',
    path: '/admin/users',
    summary: 'Add an end-user with a password',
    description:
      'Body `{email, password, email_verified?, name?, given_name?, ...}` (the profile claims of /register). `email_verified` (default false) says whether the project vouches for the address. ' +
      '→ 201 `{user}`; 409 EMAIL_TAKEN when the address is registered in the project; 400 naming the field.',
    operation: `mutation IdentityAdminUserCreate($input: CreateProjectEndUserInput!) { user: createProjectEndUser(input: $input) { ${ADMIN_USER} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  adminRow({
    id: 'identity.admin.user.invite',
    method: 'POST',
    path: '/admin/users/invite',
    summary: 'Invite an end-user by e-mail',
    description:
      'Body `{email, email_verified?, name?, ...}`: the user is created without a password and gets a mail (an invitation) with a link to choose one: ' +
      'the password-reset page, `/password/reset/confirm`, with a token that works once and for 7 days; choosing the password also confirms the address. ' +
      '→ 201 `{user}`; 409 EMAIL_TAKEN; 429 RATE_LIMITED past 3 invitations per address or 200 per project in an hour.',
    operation: `mutation IdentityAdminUserInvite($input: InviteProjectEndUserInput!) { user: inviteProjectEndUser(input: $input) { ${ADMIN_USER} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  adminRow({
    id: 'identity.admin.user.invitation.resend',
    method: 'POST',
    path: '/admin/users/:id/invite',
    summary: "Send an end-user's invitation again",
    description:
      'A new link to choose a password (once, 7 days; an earlier link keeps working until a password is chosen or it expires), for a user whose invitation expired or got lost. ' +
      '204; 404 for an unknown user; 429 RATE_LIMITED like invitations.',
    operation: 'mutation IdentityAdminUserInvitationResend($id: ID!) { resendProjectEndUserInvitation(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.list',
    method: 'GET',
    path: '/admin/users',
    summary: "List and search the project's end-users",
    description:
      'Newest first. Query `search` (part of the e-mail or name, case-insensitive), `role` (only users holding it), `disabled` (true or false), ' +
      '`first` (1-100, default 20) and `after` (the `next_cursor` of the previous page) → `{users, next_cursor}`.',
    operation: `query IdentityAdminUserList($search: String, $role: String, $disabled: Boolean, $first: Int, $after: String) {
      projectEndUsers(search: $search, role: $role, disabled: $disabled, first: $first, after: $after) { users: items { ${ADMIN_USER} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: {
      search: 'query.search',
      role: 'query.role',
      disabled: 'query.disabled',
      first: 'query.first',
      after: 'query.after',
    },
    unwrap: true,
  }),
  adminRow({
    id: 'identity.admin.user.get',
    method: 'GET',
    path: '/admin/users/:id',
    summary: 'One end-user of the project',
    description: '→ `{user}` with `roles`, `app_metadata`, `disabled`. Users of other projects are 404.',
    operation: `query IdentityAdminUserGet($id: ID!) { user: projectEndUser(id: $id) { ${ADMIN_USER} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.update',
    method: 'PATCH',
    path: '/admin/users/:id',
    summary: "Set an end-user's app metadata and roles",
    description:
      'Body `{app_metadata?, roles?}`: `app_metadata` a JSON object (at most 16 KiB) replacing the old one; `roles` role names (1-64 of letters, digits, `_ . : -`; at most 50) replacing the old list. ' +
      "Roles are the only source of `role:<name>` scopes (storage policies, RLS through `request.scopes`); a role taken away is gone from the user's tokens at once. → `{user}`.",
    operation: `mutation IdentityAdminUserUpdate($id: ID!, $input: UpdateProjectEndUserInput!) { user: updateProjectEndUser(id: $id, input: $input) { ${ADMIN_USER} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  }),
  adminRow({
    id: 'identity.admin.user.disable',
    method: 'POST',
    path: '/admin/users/:id/disable',
    summary: 'Disable an end-user',
    description:
      'Sign-in is refused (`invalid_grant`, "This account is disabled") and every session ends at once: its access and refresh tokens stop working. → `{user}`.',
    operation: `mutation IdentityAdminUserDisable($id: ID!) { user: disableProjectEndUser(id: $id) { ${ADMIN_USER} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.enable',
    method: 'POST',
    path: '/admin/users/:id/enable',
    summary: 'Enable a disabled end-user',
    description: 'The user may sign in again; sessions ended by the disable stay ended. → `{user}`.',
    operation: `mutation IdentityAdminUserEnable($id: ID!) { user: enableProjectEndUser(id: $id) { ${ADMIN_USER} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.delete',
    method: 'DELETE',
    path: '/admin/users/:id',
    summary: 'Delete an end-user',
    description: 'With its sessions, codes and reset tokens; its tokens stop working at once. 204; 404 when unknown.',
    operation: 'mutation IdentityAdminUserDelete($id: ID!) { deleteProjectEndUser(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.sessions.revoke',
    method: 'POST',
    path: '/admin/users/:id/revoke-sessions',
    summary: 'End every session of an end-user',
    description:
      'Access and refresh tokens of every session stop working at once; the user may sign in again. → `{revoked_sessions: n}`.',
    operation:
      'mutation IdentityAdminUserSessionsRevoke($id: ID!) { revoked_sessions: revokeProjectEndUserSessions(id: $id) }',
    status: 200,
    variables: { id: 'params.id' },
  }),
  adminRow({
    id: 'identity.admin.user.mfa.reset',
    method: 'POST',
    path: '/admin/users/:id/reset-mfa',
    summary: "Reset an end-user's TOTP MFA",
    description:
      'MFA is turned off and its secret forgotten (the user may enroll again); sessions are left alone. → `{user}`.',
    operation: `mutation IdentityAdminUserMfaReset($id: ID!) { user: resetProjectEndUserMfa(id: $id) { ${ADMIN_USER} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
];

export const identityRoutes: RouteRow[] = [...endUserRoutes, ...adminUserRoutes];
