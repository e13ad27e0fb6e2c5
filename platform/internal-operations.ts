// Every operation one part of Tessera asks of a domain it does not own, declared once: its GraphQL document, the
// types of its variables and result, the subgraph that answers it, who calls it and under which principal it runs.
// Subgraphs never import each other: identity asks tenant about an OIDC client, data asks functions about hooks,
// the router asks tenant and identity who a credential is, the front door's hand-written handlers (OAuth wire
// formats, byte streams, the public webhook receiver) ask the domains behind them. Each goes through
// `callInternal`, which turns the GraphQL errors of the answer into the error table's AppError in one place
// (`errorOfGraphQL`); callers keep only their own decisions ("NOT_FOUND means the project is gone").
// Most of these fields are `@inaccessible`: absent from the public API, reachable only through the router's
// fast path (planned against the whole supergraph) and refused by the subgraphs to any non-internal principal.
// tests/unit/internal-operations.test.ts checks that each document validates against the supergraph, is answered
// by the subgraph declared, and is called from where the table says; and that no GraphQL document is written
// anywhere else in services, handlers, the platform or the router (the REST route table, rest-compat/routes/*,
// is the other place operations live: the documented REST → GraphQL map).
import type { RequestContext } from './auth.ts';
import { DATA_ACTIONS, dataActionDocument, type DataAction } from './data-actions.ts';
import { AppError, errorOfGraphQL } from './errors.ts';
import type { ExecutionResultJson } from './subgraph.ts';

export type SubgraphName = 'tenant' | 'identity' | 'data' | 'storage' | 'functions';
/** Who calls: a subgraph (its folder), the router's credential check, the front door (rest-compat), the platform. */
export type Caller = SubgraphName | 'router' | 'front door' | 'platform';
/**
 * The principal an operation runs as: `internal` (the router's own trusted principal, refused to anyone outside),
 * `caller` (the credentials of the request being served: the subgraph applies its own rules to them) or
 * `anonymous` (a link in a mail: the token in the variables is the credential).
 */
export type RunsAs = 'internal' | 'caller' | 'anonymous';

export type InternalOperation<V, R> = {
  /** The GraphQL operation name (also the key callers name it by in the table). */
  name: string;
  document: string;
  /** The subgraph that answers it (for operations the gateway completes from others: the one whose root field it is). */
  subgraph: SubgraphName;
  callers: readonly Caller[];
  runsAs: RunsAs;
  description: string;
  /** Types only (never set): the variables and the `data` of the answer. */
  readonly types?: { variables: V; result: R };
};

/** The `data` an operation answers. */
export type ResultOf<O> = O extends InternalOperation<unknown, infer R> ? R : never;

function op<V, R>(def: Omit<InternalOperation<V, R>, 'types'>): InternalOperation<V, R> {
  return def;
}

type Json = unknown;
/** A project's branding of the hosted end-user pages. */
/** The limits of a plan; null: no limit (subgraphs/tenant/schema.graphql `PlanLimits` says what each means). */
export type PlanLimitValues = {
  maxProjects: number | null;
  maxStorageBytes: number | null;
  maxUploadBytes: number | null;
  maxDatabaseRows: number | null;
  maxDatabaseBytes: number | null;
  maxFunctionInvocationsPerMonth: number | null;
  maxRequestsPerMinute: number | null;
  minCronIntervalSeconds: number | null;
  maxCronJobs: number | null;
  maxConcurrentFunctionRuns: number | null;
  maxAsyncInvokesPerRun: number | null;
  maxQueuedFunctionRuns: number | null;
  maxRealtimeSubscribers: number | null;
  maxPendingUploads: number | null;
  maxDatabaseConnections: number | null;
  databaseCpuSecondsPerMinute: number | null;
};
/** A project's plan as the processes enforcing it read it: the limits, and what is suspended (null: nothing). */
export type ProjectPlan = { planId: string; limits: PlanLimitValues; suspended: 'project' | 'tenant' | null };

export type ProjectBrandingFacts = {
  projectName: string;
  logoUrl: string | null;
  brandColor: string | null;
  hostedSignUp: boolean;
  hostedPasswordReset: boolean;
};
/** What the tenant subgraph vouches for about an OIDC client. */
export type OidcClientFacts = {
  clientId: string;
  projectId: string;
  tenantId: string;
  redirectUris: string[];
  grantTypes: string[];
  /** Scopes the client may be issued (`role:*`: role scopes, each for a role the end-user holds). */
  allowedScopes: string[];
  /** A public client has no secret: PKCE is required, client_credentials is refused. */
  public: boolean;
  /** Whether the secret given is the client's (null when none was given). */
  secretValid: boolean | null;
};
/** A client's facts as the identity subgraph's operations take them (`OidcClientFactsInput`). */
export type OidcClientFactsInput = Omit<OidcClientFacts, 'secretValid'>;
export type ClientCredentialsInput = { clientId: string; clientSecret: string | null };
export type HookTriggerRow = { table: string; timing: 'before' | 'after'; events: string[] };
/** A project's CORS rule as the front door keeps it. */
export type CorsRuleRow = {
  projectId: string;
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposedHeaders: string[];
  maxAge: number;
  allowCredentials: boolean;
};
/** The principal an end-user or client_credentials access token stands for, as the router hands it on. */
export type AuthenticatedToken = {
  kind: 'user' | 'project';
  projectId: string;
  tenantId: string | null;
  userId: string | null;
  clientId: string;
  scopes: string[];
  mfa: boolean;
  sessionId: string | null;
};
export type StorageUploadTicket = { id: string; projectId: string; maxBytes: number; limitedBy: 'upload' | 'quota' };
export type StorageDownloadFacts = {
  id: string;
  projectId: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string | null;
  status: string;
  updatedAt: string;
};

/** A storage object in the REST API's shape (snake_case): the route table's rows and the upload handler answer it. */
export const STORAGE_OBJECT_REST = `id project_id: projectId folder name path content_type: contentType size sha256 etag status owner_id: ownerId
  download_url: downloadUrl created_at: createdAt updated_at: updatedAt confirmed_at: confirmedAt`;

export const INTERNAL_OPERATIONS = {
  // ── Credentials (the router) ────────────────────────────────────────────────────────────────────────────────
  authenticate: op<
    { apiKey?: string; token?: string },
    {
      _authenticate: {
        kind: string;
        tenantId?: string;
        projectId?: string;
        sessionId?: string;
        operator?: string;
        keyId?: string;
      };
    }
  >({
    name: 'Authenticate',
    document: `query Authenticate($apiKey: String, $token: String) {
  _authenticate(apiKey: $apiKey, token: $token) { kind tenantId projectId sessionId operator keyId }
}`,
    subgraph: 'tenant',
    callers: ['router'],
    runsAs: 'internal',
    description: 'Who a project API key, publishable key, tenant access token or operator key stands for.',
  }),
  authenticateUser: op<{ token: string }, { _authenticateUser: AuthenticatedToken | null }>({
    name: 'AuthenticateUser',
    document: `query AuthenticateUser($token: String!) {
  _authenticateUser(token: $token) { kind projectId tenantId userId clientId scopes mfa sessionId }
}`,
    subgraph: 'identity',
    callers: ['router'],
    runsAs: 'internal',
    description: 'Who an end-user or client_credentials access token stands for.',
  }),

  // ── Tenant management, asked by others ──────────────────────────────────────────────────────────────────────
  oidcClient: op<{ clientId: string; clientSecret: string | null }, { _oidcClient: OidcClientFacts | null }>({
    name: 'IdentityOidcClient',
    document: `query IdentityOidcClient($clientId: String!, $clientSecret: String) {
  _oidcClient(clientId: $clientId, clientSecret: $clientSecret) { clientId projectId tenantId redirectUris grantTypes allowedScopes public secretValid }
}`,
    subgraph: 'tenant',
    callers: ['identity', 'front door'],
    runsAs: 'internal',
    description:
      'An OIDC client by id, and whether the secret given (if any) is its secret; null for an unknown client.',
  }),
  projectBranding: op<{ projectId: string }, { _projectBranding: ProjectBrandingFacts | null }>({
    name: 'ProjectBranding',
    document: `query ProjectBranding($projectId: ID!) {
  _projectBranding(projectId: $projectId) { projectName logoUrl brandColor hostedSignUp hostedPasswordReset }
}`,
    subgraph: 'tenant',
    callers: ['front door'],
    runsAs: 'internal',
    description: 'How a project presents itself on the hosted end-user pages (null: no such project).',
  }),
  projectPlanLimits: op<{ projectId: string }, { _projectPlanLimits: ProjectPlan | null }>({
    name: 'PlatformProjectPlanLimits',
    document: `query PlatformProjectPlanLimits($projectId: ID!) {
  _projectPlanLimits(projectId: $projectId) {
    planId suspended
    limits {
      maxProjects maxStorageBytes maxUploadBytes maxDatabaseRows maxDatabaseBytes maxFunctionInvocationsPerMonth
      maxRequestsPerMinute minCronIntervalSeconds maxCronJobs maxConcurrentFunctionRuns maxAsyncInvokesPerRun maxQueuedFunctionRuns
      maxRealtimeSubscribers maxPendingUploads maxDatabaseConnections databaseCpuSecondsPerMinute
    }
  }
}`,
    subgraph: 'tenant',
    callers: ['platform'],
    runsAs: 'internal',
    description: "The limits of a project's plan and whether it is suspended (null: no such project).",
  }),
  corsRules: op<Record<string, never>, { _corsRules: CorsRuleRow[] }>({
    name: 'CorsRules',
    document: `query CorsRules { _corsRules {
  projectId allowedOrigins allowedMethods allowedHeaders exposedHeaders maxAge allowCredentials
} }`,
    subgraph: 'tenant',
    callers: ['front door'],
    runsAs: 'internal',
    description: "Every project's CORS rule, for the front door's origin checks.",
  }),
  storageLimitsRefresh: op<{ projectId: string }, { storageProject: { storageLimits: { quotaBytes: number } } | null }>(
    {
      name: 'StorageLimitsRefresh',
      // Asking for the field makes the router fetch the plan from tenant management and hand it to
      // Project.storageLimits (@requires), whose resolver remembers it.
      document:
        'query StorageLimitsRefresh($projectId: ID!) { storageProject(projectId: $projectId) { storageLimits { quotaBytes } } }',
      subgraph: 'storage',
      callers: ['storage'],
      runsAs: 'internal',
      description: "Has the router hand storage a project's plan limits again (completed from tenant management).",
    },
  ),

  // ── The project database, asked by tenant management and the functions domain ─────────────────────────────────────────────────────────
  projectTables: op<{ projectId: string }, { _projectTables: string[] }>({
    name: 'TenantProjectTables',
    document: 'query TenantProjectTables($projectId: ID!) { _projectTables(projectId: $projectId) }',
    subgraph: 'data',
    callers: ['tenant', 'functions'],
    runsAs: 'internal',
    description:
      "The tables of a project's database: a realtime switch is turned on, and a database hook made, only for one of them.",
  }),

  // ── Database hooks (data ↔ functions) ───────────────────────────────────────────────────────────────────────
  hookTriggers: op<{ projectId: string }, { _hookTriggers: HookTriggerRow[] }>({
    name: 'DataHookTriggers',
    document:
      'query DataHookTriggers($projectId: ID!) { _hookTriggers(projectId: $projectId) { table timing events } }',
    subgraph: 'functions',
    callers: ['data'],
    runsAs: 'internal',
    description: 'Which (table, timing, events) of a project have database hooks.',
  }),
  runBeforeHooks: op<
    {
      projectId: string;
      table: string;
      event: string;
      rows: unknown[];
      where: Json;
      userId: string | null;
      depth: number;
      dryRun: boolean;
    },
    { _runBeforeHooks: Json }
  >({
    name: 'DataRunBeforeHooks',
    document: `mutation DataRunBeforeHooks($projectId: ID!, $table: String!, $event: String!, $rows: JSON!, $where: JSON, $userId: String, $depth: Int!, $dryRun: Boolean) {
  _runBeforeHooks(projectId: $projectId, table: $table, event: $event, rows: $rows, where: $where, userId: $userId, depth: $depth, dryRun: $dryRun)
}`,
    subgraph: 'functions',
    callers: ['data'],
    runsAs: 'internal',
    description: "Runs a write's before-hooks; answers the rows to write, or refuses the write.",
  }),
  enqueueAfterHooks: op<
    { projectId: string; table: string; event: string; rows: unknown[]; userId: string | null; depth: number },
    { _enqueueAfterHooks: Json }
  >({
    name: 'DataEnqueueAfterHooks',
    document: `mutation DataEnqueueAfterHooks($projectId: ID!, $table: String!, $event: String!, $rows: JSON!, $userId: String, $depth: Int!) {
  _enqueueAfterHooks(projectId: $projectId, table: $table, event: $event, rows: $rows, userId: $userId, depth: $depth)
}`,
    subgraph: 'functions',
    callers: ['data'],
    runsAs: 'internal',
    description: "Queues the after-hooks of a committed write's rows.",
  }),
  hooksChanged: op<{ projectId: string }, { _hooksChanged: boolean }>({
    name: 'FunctionsHooksChanged',
    document: 'mutation FunctionsHooksChanged($projectId: ID!) { _hooksChanged(projectId: $projectId) }',
    subgraph: 'data',
    callers: ['functions'],
    runsAs: 'internal',
    description:
      "Tells the data API instance the router reaches that a project's hooks changed (the broadcast tells the others).",
  }),
  databaseStepDryRun: op<{ operations: Json }, { result: { results: unknown[] } | null }>({
    name: 'DatabaseStepDryRun',
    document:
      'mutation DatabaseStepDryRun($operations: JSON!) { result: dataTransaction(operations: $operations, rollback: true) { results } }',
    subgraph: 'data',
    callers: ['functions'],
    runsAs: 'caller',
    description: "A Database step's action(s) in a dry run: inside a transaction the data API rolls back.",
  }),

  // ── Storage's byte streams (the front door) ─────────────────────────────────────────────────────────────────
  storageUploadBegin: op<{ input: Record<string, unknown> }, { _beginStorageUpload: StorageUploadTicket }>({
    name: 'StorageUploadBegin',
    document:
      'mutation StorageUploadBegin($input: BeginStorageUploadInput!) { _beginStorageUpload(input: $input) { id projectId maxBytes limitedBy } }',
    subgraph: 'storage',
    callers: ['front door'],
    runsAs: 'caller',
    description:
      "Checks an upload against the caller's rights and the quota and reserves its bytes; answers where the bytes go.",
  }),
  storageUploadComplete: op<{ id: string; size: number; sha256: string }, { object: Record<string, unknown> }>({
    name: 'StorageUploadComplete',
    document: `mutation StorageUploadComplete($id: ID!, $size: Float!, $sha256: String!) {
  object: _completeStorageUpload(id: $id, size: $size, sha256: $sha256) { ${STORAGE_OBJECT_REST} }
}`,
    subgraph: 'storage',
    callers: ['front door'],
    runsAs: 'caller',
    description: 'Records the stored bytes of an upload; answers the object (REST shape).',
  }),
  storageBlobStoreId: op<Record<string, never>, { _blobStoreId: string }>({
    name: 'StorageBlobStoreId',
    document: 'query StorageBlobStoreId { _blobStoreId }',
    subgraph: 'storage',
    callers: ['front door'],
    runsAs: 'internal',
    description:
      "The id kept in the storage subgraph's blob store: a front door streams bytes into its own and refuses to start on another.",
  }),
  storageUploadAbort: op<{ id: string }, { _abortStorageUpload: boolean }>({
    name: 'StorageUploadAbort',
    document: 'mutation StorageUploadAbort($id: ID!) { _abortStorageUpload(id: $id) }',
    subgraph: 'storage',
    callers: ['front door'],
    runsAs: 'caller',
    description: 'Forgets an upload whose bytes could not be stored.',
  }),
  storageDownload: op<{ id: string }, { object: StorageDownloadFacts }>({
    name: 'StorageDownload',
    document:
      'query StorageDownload($id: ID!) { object: storageObject(id: $id) { id projectId name contentType size sha256 status updatedAt } }',
    subgraph: 'storage',
    callers: ['front door'],
    runsAs: 'caller',
    description: 'What a download needs to know of an object the caller may read.',
  }),

  // ── Edge functions' public webhook receiver (the front door) ────────────────────────────────────────────────
  receiveWebhook: op<
    {
      projectId: string;
      slug: string;
      request: {
        method: string;
        headers: Record<string, string>;
        query: Record<string, unknown>;
        rawBody: string;
        idempotencyKey: string | null;
      };
    },
    { _receiveWebhook: { status: number; body: Json; headers: Record<string, unknown> | null } }
  >({
    name: 'FunctionWebhookReceive',
    document: `mutation FunctionWebhookReceive($projectId: ID!, $slug: String!, $request: InboundWebhookInput!) {
  _receiveWebhook(projectId: $projectId, slug: $slug, request: $request) { status body headers }
}`,
    subgraph: 'functions',
    callers: ['front door'],
    runsAs: 'internal',
    description: "Runs the function of a project's inbound webhook receiver on one request.",
  }),

  // ── The identity provider's wire endpoints (the front door) ─────────────────────────────────────────────────
  // /token, /introspect and /revocation hand the client's credentials to the identity subgraph, which
  // authenticates the client itself (with a cache of what the tenant subgraph vouched for): one operation per request.
  issueTokens: op<
    { credentials: ClientCredentialsInput; grant: Record<string, unknown> },
    {
      _issueTokens: {
        accessToken: string;
        tokenType: string;
        expiresIn: number;
        refreshToken: string | null;
        idToken: string | null;
        scope: string;
      };
    }
  >({
    name: 'IdentityIssueTokens',
    document: `mutation IdentityIssueTokens($credentials: ClientCredentialsInput!, $grant: TokenGrantInput!) {
  _issueTokens(credentials: $credentials, grant: $grant) { accessToken tokenType expiresIn refreshToken idToken scope }
}`,
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/token: authenticates the client and answers the grant.',
  }),
  checkAuthorization: op<
    { client: OidcClientFactsInput; input: Record<string, unknown> },
    { _checkAuthorizationRequest: boolean }
  >({
    name: 'IdentityCheckAuthorization',
    document: `query IdentityCheckAuthorization($client: OidcClientFactsInput!, $input: AuthorizeInput!) {
  _checkAuthorizationRequest(client: $client, input: $input)
}`,
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/authorize: checks an authorization request before the sign-in page is shown.',
  }),
  authorize: op<{ client: OidcClientFactsInput; input: Record<string, unknown> }, { _authorize: { code: string } }>({
    name: 'IdentityAuthorize',
    document:
      'mutation IdentityAuthorize($client: OidcClientFactsInput!, $input: AuthorizeInput!) { _authorize(client: $client, input: $input) { code } }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/authorize: signs the user in on the hosted page and issues an authorization code.',
  }),
  introspect: op<
    { token: string; credentials: ClientCredentialsInput },
    { _introspectToken: Record<string, unknown> & { active: boolean } }
  >({
    name: 'IdentityIntrospect',
    document: `query IdentityIntrospect($token: String!, $credentials: ClientCredentialsInput!) {
  _introspectToken(token: $token, credentials: $credentials) { active scope clientId username tokenType exp iat sub aud iss jti projectId sid }
}`,
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/introspect (RFC 7662): authenticates the client and describes the token.',
  }),
  revoke: op<{ token: string; credentials: ClientCredentialsInput }, { _revokeToken: boolean }>({
    name: 'IdentityRevoke',
    document:
      'mutation IdentityRevoke($token: String!, $credentials: ClientCredentialsInput!) { _revokeToken(token: $token, credentials: $credentials) }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/revocation (RFC 7009): authenticates the client and revokes the token.',
  }),
  endSession: op<{ idTokenHint: string }, { _endSession: { clientId: string; revoked: boolean } }>({
    name: 'IdentityEndSession',
    document:
      'mutation IdentityEndSession($idTokenHint: String!) { _endSession(idTokenHint: $idTokenHint) { clientId revoked } }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/logout: revokes the session an ID token names.',
  }),
  jwks: op<Record<string, never>, { identitySigningKeys: Record<string, unknown>[] }>({
    name: 'IdentityJwks',
    document: 'query IdentityJwks { identitySigningKeys { kid kty alg use crv x y } }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'internal',
    description: '/jwks.json: the public signing keys.',
  }),
  userInfo: op<Record<string, never>, { userInfo: Record<string, unknown> }>({
    name: 'IdentityUserInfo',
    document: `query IdentityUserInfo { userInfo {
  sub name given_name: givenName family_name: familyName middle_name: middleName nickname preferred_username: preferredUsername
  picture website gender birthdate zoneinfo locale updated_at: updatedAt email email_verified: emailVerified phone_number: phoneNumber
} }`,
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'caller',
    description: "/userinfo: the signed-in end-user's claims (OIDC names).",
  }),
  resetConfirm: op<{ input: { token: unknown; newPassword: unknown } }, { confirmEndUserPasswordReset: boolean }>({
    name: 'IdentityResetConfirm',
    document:
      'mutation IdentityResetConfirm($input: ConfirmEndUserPasswordResetInput!) { confirmEndUserPasswordReset(input: $input) }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'anonymous',
    description: 'The page behind a reset mail: sets the new password.',
  }),
  hostedSignUp: op<
    { input: { email: string; password: string; name: string | null } },
    { registerEndUser: { id: string } }
  >({
    name: 'IdentityHostedSignUp',
    document: 'mutation IdentityHostedSignUp($input: RegisterEndUserInput!) { registerEndUser(input: $input) { id } }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'caller',
    description:
      "The hosted sign-up page: registers an end-user as the project's publishable key would (the page acts for the client's project).",
  }),
  hostedPasswordReset: op<{ email: string }, { requestEndUserPasswordReset: boolean }>({
    name: 'IdentityHostedPasswordReset',
    document: 'mutation IdentityHostedPasswordReset($email: String!) { requestEndUserPasswordReset(email: $email) }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'caller',
    description:
      "The hosted forgot-password page: mails a reset link as the project's publishable key would (always true: no enumeration).",
  }),
  verifyConfirm: op<{ token: unknown }, { confirmEndUserEmailVerification: boolean }>({
    name: 'IdentityVerifyConfirm',
    document: 'mutation IdentityVerifyConfirm($token: String!) { confirmEndUserEmailVerification(token: $token) }',
    subgraph: 'identity',
    callers: ['front door'],
    runsAs: 'anonymous',
    description: 'The page behind a verification mail: confirms the address.',
  }),
} as const;

// ── The Database step's data-API actions (functions → data), generated from the table of data actions ─────────

function dataActionOperation(
  action: string,
  a: DataAction,
): InternalOperation<Record<string, unknown>, { result: unknown }> {
  return op({
    name: 'DatabaseStep',
    document: dataActionDocument(a, 'DatabaseStep', 'result'),
    subgraph: 'data',
    callers: ['functions'],
    runsAs: 'caller',
    description: `A Database step's ${action}: ${a.field} as the function's project.`,
  });
}

/** One operation per Database-step action, generated from DATA_ACTIONS. */
export const DATABASE_STEP_OPERATIONS: Readonly<
  Record<string, InternalOperation<Record<string, unknown>, { result: unknown }>>
> = Object.fromEntries(Object.entries(DATA_ACTIONS).map(([name, a]) => [name, dataActionOperation(name, a)]));

// ── Calling ──────────────────────────────────────────────────────────────────────────────────────────────────

/** Whatever runs an operation: the router client of a subgraph, the front door's router, or one subgraph's handle. */
export type InternalTarget =
  | { run: (query: string, variables: Record<string, unknown>, ctx: RequestContext) => Promise<ExecutionResultJson> }
  | {
      execute: (
        query: string,
        variables: Record<string, unknown>,
        ctx: RequestContext,
        operationName?: string,
      ) => Promise<ExecutionResultJson>;
    };

/**
 * Runs an operation of the table and answers its `data`; GraphQL errors become the error table's AppError
 * (`errorOfGraphQL`: the worst error; a code outside the table, or INTERNAL, stays INTERNAL and is masked when shown).
 * Errors thrown on the way (the router or a subgraph could not be reached) pass through as thrown.
 */
export async function callInternal<V, R>(
  target: InternalTarget,
  operation: InternalOperation<V, R>,
  variables: V,
  ctx: RequestContext,
): Promise<R> {
  if (operation.runsAs === 'internal' && ctx.principal.kind !== 'internal') {
    throw new AppError(
      'INTERNAL',
      `${operation.name} runs as the internal principal only, not as ${ctx.principal.kind}`,
    );
  }
  const vars = variables as Record<string, unknown>;
  const result =
    'run' in target
      ? await target.run(operation.document, vars, ctx)
      : await target.execute(operation.document, vars, ctx, operation.name);
  if (result.errors?.length) {
    const err = errorOfGraphQL(result.errors);
    answers.add(err);
    throw err;
  }
  return result.data as R;
}

const answers = new WeakSet<AppError>();

/**
 * Whether an error thrown by `callInternal` is what the answering subgraph said (true), rather than a failure to reach
 * it (the router or the subgraph away, thrown on the way): for callers that may fall back on what they knew.
 */
export function isAnswerError(err: unknown): err is AppError {
  return err instanceof AppError && answers.has(err);
}

/** Every operation of the table, the generated ones included (for the table's test). */
export function allInternalOperations(): { key: string; operation: InternalOperation<unknown, unknown> }[] {
  return [
    ...Object.entries(INTERNAL_OPERATIONS).map(([key, operation]) => ({
      key,
      operation: operation as InternalOperation<unknown, unknown>,
    })),
    ...Object.entries(DATABASE_STEP_OPERATIONS).map(([key, operation]) => ({
      key: `DATABASE_STEP_OPERATIONS.${key}`,
      operation: operation as InternalOperation<unknown, unknown>,
    })),
  ];
}
