// Every method and path of the seed's endpoint tables (shared/seed), as they appear in /openapi.json:
// `:name` parameters as `{name}`, the data API's `/v1/*` as the `/api/v1/*` it is rewritten to.
export const SEED_ENDPOINTS: string[] = [
  // Tenant management
  'POST /auth/api/v1/tenants/signup', 'POST /auth/api/v1/tenant/login', 'POST /auth/api/v1/tenant/logout',
  'POST /auth/api/v1/tenant/mfa/enroll', 'POST /auth/api/v1/tenant/mfa/verify', 'POST /auth/api/v1/tenant/mfa/disable',
  'GET /auth/api/v1/projects', 'POST /auth/api/v1/projects', 'PUT /auth/api/v1/projects/{id}', 'DELETE /auth/api/v1/projects/{id}',
  'POST /auth/api/v1/projects/{id}/regenerate-key', 'GET /auth/api/v1/projects/{id}/publications',
  'POST /auth/api/v1/projects/{id}/publications', 'GET /auth/api/v1/plans',
  // Identity provider
  'GET /.well-known/openid-configuration', 'GET /jwks.json', 'POST /register', 'POST /token', 'GET /userinfo',
  'POST /introspect', 'POST /revocation', 'POST /logout', 'POST /mfa/enroll', 'POST /mfa/verify', 'POST /mfa/disable',
  'POST /password/reset/request', 'POST /password/reset/confirm', 'POST /password/change',
  'POST /email/verify/request', 'POST /email/verify/confirm',
  // Data API
  ...['find', 'findOne', 'insert', 'update', 'delete', 'aggregate', 'transaction', 'vectorSearch', 'rawSQL'].map((a) => `POST /api/v1/${a}`),
  'GET /api/v1/publication', 'POST /api/v1/publication',
  // Storage
  'POST /storage/api/v1/storage/upload', 'POST /storage/api/v1/storage/upload/confirm', 'GET /storage/api/v1/storage/download/{id}',
  'GET /storage/api/v1/storage/objects', 'GET /storage/api/v1/storage/folders', 'GET /storage/api/v1/storage/usage',
  'DELETE /storage/api/v1/storage/objects/{id}', 'GET /storage/api/v1/storage/policies', 'POST /storage/api/v1/storage/policies',
  'DELETE /storage/api/v1/storage/policies',
  // Edge functions and the webhook receiver
  'GET /edge/api/v1/functions', 'POST /edge/api/v1/functions', 'GET /edge/api/v1/functions/{id}', 'PUT /edge/api/v1/functions/{id}',
  'DELETE /edge/api/v1/functions/{id}', 'POST /edge/api/v1/invoke/{name}',
  'GET /edge/api/v1/webhooks', 'POST /edge/api/v1/webhooks', 'DELETE /edge/api/v1/webhooks',
  'GET /edge/api/v1/hooks', 'POST /edge/api/v1/hooks', 'DELETE /edge/api/v1/hooks',
  'POST /edge/webhooks/{project_id}/{slug}', 'POST /webhooks/{project_id}/{slug}',
  'GET /edge/api/v1/cron', 'POST /edge/api/v1/cron', 'DELETE /edge/api/v1/cron',
  'GET /edge/api/v1/email-templates', 'POST /edge/api/v1/email-templates', 'PUT /edge/api/v1/email-templates', 'DELETE /edge/api/v1/email-templates',
  'GET /edge/api/v1/email-config', 'POST /edge/api/v1/email-config', 'DELETE /edge/api/v1/email-config',
  'GET /edge/api/v1/executions', 'GET /edge/api/v1/executions/{id}', 'GET /edge/api/v1/executions/{id}/events', 'GET /edge/api/v1/stats',
  // Health
  'GET /health', 'GET /health/auth/readyz', 'GET /health/idp/readyz', 'GET /health/core/readyz', 'GET /health/storage/readyz',
];
