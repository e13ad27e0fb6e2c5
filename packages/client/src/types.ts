// Types of the REST API, taken from the generated OpenAPI types (./generated/openapi.ts): the JSON body a path and
// method answer on success, and the JSON body they take.
import type { paths } from './generated/openapi.ts';

export type { paths, components, operations } from './generated/openapi.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
type Success<R> = { [S in keyof R]: S extends 200 | 201 | 202 ? JsonOf<R[S]> : never }[keyof R];

/** The JSON a path and method answer on success. */
export type ResponseOf<P extends keyof paths, M extends Method> =
  Op<P, M> extends { responses: infer R } ? Success<R> : never;

/** The query parameters a path and method take. */
export type QueryOf<P extends keyof paths, M extends Method> =
  Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The JSON body a path and method take. */
export type BodyOf<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;

/** A project as its tenant sees it (with both keys). */
export type Project = ResponseOf<'/auth/api/v1/projects/{id}', 'get'>['project'];
/** A project in a list (key prefixes only). */
export type ProjectListed = ResponseOf<'/auth/api/v1/projects', 'get'>['projects'][number];
export type Tenant = NonNullable<ResponseOf<'/auth/api/v1/tenant', 'get'>['tenant']>;
export type Plan = ResponseOf<'/auth/api/v1/plans', 'get'>['plans'][number];
export type OidcClient = ResponseOf<'/auth/api/v1/projects/{id}/oidc-clients', 'get'>['oidc_clients'][number];
export type ProjectCors = ResponseOf<'/auth/api/v1/projects/{id}/cors', 'get'>['cors'];
export type Publication = ResponseOf<'/auth/api/v1/projects/{id}/publications', 'get'>['publications'][number];
/** How the hosted sign-in pages present a project. */
export type ProjectBranding = ResponseOf<'/auth/api/v1/projects/{id}/branding', 'get'>['branding'];
/** One request of a project's request log. */
export type LoggedRequest = ResponseOf<'/auth/api/v1/projects/{id}/requests', 'get'>['requests'][number];
/** The filters and paging of the request log. */
export type RequestLogQuery = QueryOf<'/auth/api/v1/projects/{id}/requests', 'get'>;
export type EndUser = ResponseOf<'/register', 'post'>['user'];
export type StorageObject = ResponseOf<'/storage/api/v1/storage/objects/{id}', 'get'>['object'];
export type StoragePolicy = ResponseOf<'/storage/api/v1/storage/policies', 'get'>['policies'][number];
export type EdgeFunction = ResponseOf<'/edge/api/v1/functions/{id}', 'get'>['function'];
export type FunctionSecret = ResponseOf<'/edge/api/v1/secrets', 'get'>['secrets'][number];
export type Execution = ResponseOf<'/edge/api/v1/executions/{id}', 'get'>['execution'];
export type ExecutionEvent = ResponseOf<'/edge/api/v1/executions/{id}/events', 'get'>['events'][number];
export type Hook = ResponseOf<'/edge/api/v1/hooks', 'get'>['hooks'][number];
export type WebhookReceiver = ResponseOf<'/edge/api/v1/webhooks', 'get'>['webhooks'][number];
export type CronJob = ResponseOf<'/edge/api/v1/cron', 'get'>['cron_jobs'][number];
export type EmailTemplate = ResponseOf<'/edge/api/v1/email-templates', 'get'>['email_templates'][number];
export type EmailConfig = NonNullable<ResponseOf<'/edge/api/v1/email-config', 'get'>['email_config']>;
export type EventSubscription = ResponseOf<'/edge/api/v1/event-subscriptions', 'get'>['event_subscriptions'][number];
export type EventDelivery = ResponseOf<'/edge/api/v1/event-subscriptions/{id}/deliveries', 'get'>['deliveries'][number];
/** One delivery with every attempt. */
export type EventDeliveryDetail = ResponseOf<
  '/edge/api/v1/event-subscriptions/{id}/deliveries/{delivery_id}',
  'get'
>['delivery'];
/** What changed between two executions, overall and step by step. */
export type ExecutionDiff = ResponseOf<'/edge/api/v1/executions/{id}/diff/{other}', 'get'>['diff'];

/** Tokens from the tenant's login or refresh. */
export type TenantSession = ResponseOf<'/auth/api/v1/tenant/login', 'post'>;
/** One live sign-in of the developer account, as `tenant.sessions.list()` shows it. */
export type TenantSessionInfo = ResponseOf<'/auth/api/v1/tenant/sessions', 'get'>['sessions'][number];

/** Tokens from /token (RFC 6749). */
export type TokenSet = {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  refresh_token?: string;
  id_token?: string;
};
