// Protocol errors of the token and authorization endpoints. They are AppErrors of the platform table
// (400 BAD_REQUEST for GraphQL callers) carrying the RFC 6749 error code in `details.oauth_error`,
// which the wire handlers put in `{"error": ..., "error_description": ...}`.
import { AppError } from '../../../platform/errors.ts';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'mfa_required'
  | 'login_required'
  | 'access_denied';

/** An RFC 6749 protocol error. */
export function oauthError(error: OAuthErrorCode, description: string): AppError {
  return new AppError('BAD_REQUEST', description, { oauth_error: error });
}
