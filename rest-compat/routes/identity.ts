// REST rows of the identity provider's JSON endpoints for end-users (gateway root, no version segment).
// The OAuth/OIDC wire endpoints (/token, /authorize, /userinfo, ...) are hand-written handlers in
// rest-compat/handlers/identity.ts. Fields are aliased to snake_case (OIDC claim names).
import type { RouteRow } from '../route-types.ts';

const TAG = 'Identity provider';

export const END_USER = `id project_id: projectId email email_verified: emailVerified name given_name: givenName family_name: familyName
  middle_name: middleName nickname preferred_username: preferredUsername picture website gender birthdate zoneinfo locale
  phone_number: phoneNumber mfa_enabled: mfaEnabled created_at: createdAt updated_at: updatedAt`;

export const identityRoutes: RouteRow[] = [
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
    description: 'Body `{code}`: a current code from the enrolled secret. From then on the password grant and the sign-in page need `totp_code`.',
    tag: TAG,
    auth: 'user',
    operation: 'mutation IdentityMfaVerify($code: String!) { endUserMfaVerify(code: $code) { mfa_enabled: mfaEnabled } }',
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
    operation: 'mutation IdentityMfaDisable($code: String!) { endUserMfaDisable(code: $code) { mfa_enabled: mfaEnabled } }',
    status: 200,
    variables: { code: 'body.code' },
    unwrap: true,
  },
  {
    id: 'identity.password.reset.request',
    method: 'POST',
    path: '/password/reset/request',
    summary: 'Request a password reset e-mail',
    description: 'Needs the project API key. Body `{email}`. Always 202 `{"accepted": true}`, whether the address is registered or not; the mail carries a single-use token valid for 1 hour. 429 with Retry-After past the rate limit.',
    tag: TAG,
    auth: 'project',
    operation: 'mutation IdentityResetRequest($email: String!) { accepted: requestEndUserPasswordReset(email: $email) }',
    status: 202,
    variables: { email: 'body.email' },
  },
  {
    id: 'identity.password.change',
    method: 'POST',
    path: '/password/change',
    summary: 'Change password (authenticated end-user)',
    description: "Body `{current_password, new_password}`. Every other session of the user is revoked; this one stays.",
    tag: TAG,
    auth: 'user',
    operation: 'mutation IdentityPasswordChange($input: ChangeEndUserPasswordInput!) { changeEndUserPassword(input: $input) }',
    status: 204,
    variables: { input: 'body' },
  },
  {
    id: 'identity.email.verify.request',
    method: 'POST',
    path: '/email/verify/request',
    summary: 'Request e-mail verification',
    description: 'With an end-user access token: mails the signed-in user (no body). With the project API key: body `{email}`. Always 202 `{"accepted": true}`.',
    tag: TAG,
    auth: 'any',
    operation: 'mutation IdentityVerifyRequest($email: String) { accepted: requestEndUserEmailVerification(email: $email) }',
    status: 202,
    variables: { email: 'body.email' },
  },
  {
    id: 'identity.session.logout',
    method: 'POST',
    path: '/logout',
    summary: 'Revoke the session and its refresh token',
    description: "Needs the end-user access token of the session. Its access tokens and refresh token stop working at once. (GET /logout is the OIDC end_session_endpoint.)",
    tag: TAG,
    auth: 'user',
    operation: 'mutation IdentityLogout { endUserLogout }',
    status: 204,
    variables: {},
  },
];
