// Admin operations, and who may run them. The one place that knows which operations are "admin": the
// GraphQL root fields below, grouped by the scope that opens them to a client_credentials token. Every
// subgraph executor (platform/subgraph.ts) checks the root fields of each operation it runs against this
// table before anything executes, whichever way the operation came in (a REST row, /graphql, the gateway,
// a split-mode hop, another subgraph through the router). What a field cannot tell alone (a `rawSQL`
// operation inside `dataTransaction`) asks `requireAdminScope` at the single spot that runs it.
//
// Who passes: the platform itself (`internal`), the project's secret API key, and a client_credentials
// token whose client was granted the operation's scope (or `admin`, every admin scope) by the tenant. End
// users, tenants' own tokens and anonymous callers never do, nor does the project's second key, the publishable
// (browser) key: it may run only the root fields of `PUBLISHABLE_FIELDS`, checked in the same place.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Kind, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { Principal } from './auth.ts';
import { AppError, errors } from './errors.ts';

/** The scope that opens every admin operation. */
export const ADMIN_ALL = 'admin';

/** Admin scopes → what they open (README and docs/architecture.md carry the same table; a test compares). */
export const ADMIN_SCOPES = {
  'admin:sql': {
    operations:
      'rawSQL: `POST /v1/rawSQL`, and a `rawSQL` operation inside `POST /v1/transaction`; the schema (`GET /v1/schema`) and migrations (`GET, POST /v1/migrations`)',
    fields: ['dataRawSql', 'dataSchema', 'dataSchemaDocument', 'dataMigrations', 'dataApplyMigration'],
  },
  'admin:functions': {
    operations:
      'edge function definitions, database hooks, webhook receivers, cron jobs, executions (their step logs, replay, diff), stats, outbound event subscriptions and their delivery logs',
    fields: [
      'edgeFunctions',
      'edgeFunction',
      'createEdgeFunction',
      'updateEdgeFunction',
      'deleteEdgeFunction',
      'functionHooks',
      'createFunctionHook',
      'deleteFunctionHook',
      'webhookReceivers',
      'createWebhookReceiver',
      'deleteWebhookReceiver',
      'cronJobs',
      'createCronJob',
      'updateCronJob',
      'deleteCronJob',
      'functionExecutions',
      'functionExecution',
      'functionExecutionEvents',
      'functionStats',
      'replayFunctionExecution',
      'functionExecutionDiff',
      'eventSubscriptions',
      'eventSubscription',
      'createEventSubscription',
      'updateEventSubscription',
      'deleteEventSubscription',
      'rotateEventSubscriptionSecret',
      'testEventSubscription',
      'eventDeliveries',
      'eventDelivery',
      'redeliverEvent',
    ],
  },
  'admin:secrets': {
    operations: 'function secrets (list names, set, delete)',
    fields: ['functionSecrets', 'setFunctionSecret', 'deleteFunctionSecret'],
  },
  'admin:email': {
    operations: 'e-mail configuration (SMTP settings, test send) and e-mail templates',
    fields: [
      'emailConfig',
      'setEmailConfig',
      'deleteEmailConfig',
      'testEmailConfig',
      'emailTemplates',
      'emailTemplate',
      'createEmailTemplate',
      'updateEmailTemplate',
      'deleteEmailTemplate',
      'previewEmailTemplate',
    ],
  },
  'admin:storage': {
    operations: 'storage policies (list, create, delete)',
    fields: ['storagePolicies', 'createStoragePolicy', 'deleteStoragePolicy'],
  },
  'admin:users': {
    operations:
      'the end-user admin API (`/admin/users`: add, invite (and again), list, search, get, update app metadata and roles, disable, enable, delete, revoke sessions, reset MFA)',
    fields: [
      'createProjectEndUser',
      'inviteProjectEndUser',
      'resendProjectEndUserInvitation',
      'projectEndUsers',
      'projectEndUser',
      'updateProjectEndUser',
      'disableProjectEndUser',
      'enableProjectEndUser',
      'deleteProjectEndUser',
      'revokeProjectEndUserSessions',
      'resetProjectEndUserMfa',
    ],
  },
} as const satisfies Record<string, { operations: string; fields: readonly string[] }>;

export type AdminScope = keyof typeof ADMIN_SCOPES;

/** Every scope a tenant may grant a client for admin operations (`admin` and the narrower ones). */
export const ADMIN_SCOPE_NAMES: readonly string[] = [ADMIN_ALL, ...Object.keys(ADMIN_SCOPES)];

const FIELD_SCOPE = new Map<string, AdminScope>(
  Object.entries(ADMIN_SCOPES).flatMap(([scope, def]) => def.fields.map((f) => [f, scope as AdminScope] as const)),
);

/** Whether a scope names an admin grant (`admin` or `admin:<area>`): only client_credentials tokens may carry one. */
export function isAdminScope(scope: string): boolean {
  return scope === ADMIN_ALL || scope.startsWith(`${ADMIN_ALL}:`);
}

/** The root fields of every operation of a document (aliases resolved, fragments at the root included). */
export function rootFieldsOf(doc: DocumentNode): string[] {
  const found = new Set<string>();
  const fragments = new Map(
    doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d.selectionSet]),
  );
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode): void => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) found.add(sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
      else if (!seen.has(sel.name.value)) {
        seen.add(sel.name.value);
        const frag = fragments.get(sel.name.value);
        if (frag) walk(frag);
      }
    }
  };
  for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION) walk(d.selectionSet);
  return [...found];
}

/** The admin scopes an operation document needs: those of its root fields (fragments at the root included). */
export function adminScopesOf(doc: DocumentNode): AdminScope[] {
  const found = new Set<AdminScope>();
  for (const f of rootFieldsOf(doc)) {
    const scope = FIELD_SCOPE.get(f);
    if (scope) found.add(scope);
  }
  return [...found];
}

/** The prefix of publishable keys (secret keys are `tsk_`). */
export const PUBLISHABLE_KEY_PREFIX = 'tpk_';

/**
 * Root fields the publishable key may run: what an anonymous visitor of the project's web page or app may do.
 * Every other root field (the admin operations above included) is refused to it before anything runs, with a
 * 403 naming the key kind. What these fields then allow is the domains' own decision: the data API runs as the
 * project's anonymous database role under row level security, storage applies only `public` policies, invoke
 * runs only functions marked `public`. The `@inaccessible` upload steps are reached only by the front door's
 * upload handler, with the caller's own context; `_entities` only through a query plan of the fields above.
 */
export const PUBLISHABLE_FIELDS: ReadonlySet<string> = new Set([
  // identity: sign-up, password reset, e-mail verification, the public signing keys (sign-in is /token)
  'registerEndUser',
  'requestEndUserPasswordReset',
  'confirmEndUserPasswordReset',
  'requestEndUserEmailVerification',
  'confirmEndUserEmailVerification',
  'identitySigningKeys',
  'plans',
  // the data API's actions under row level security (rawSQL is an admin operation, inside a transaction too)
  'dataFind',
  'dataFindOne',
  'dataAggregate',
  'dataVectorSearch',
  'dataInsert',
  'dataUpdate',
  'dataDelete',
  'dataTransaction',
  // storage objects under public policies
  'storageObjects',
  'storageObject',
  'storageFolders',
  'uploadStorageObject',
  'confirmStorageUpload',
  'deleteStorageObject',
  '_beginStorageUpload',
  '_completeStorageUpload',
  // functions marked public
  'invokeEdgeFunction',
  // federation plumbing, reached only through the router's plan of an allowed field
  '_entities',
  '_service',
]);

/** The 403 a publishable key gets for anything it may not do; `what` says what was tried ("run dataRawSql"). */
export function publishableRefusal(what: string): AppError {
  return new AppError(
    'FORBIDDEN',
    `The publishable key (${PUBLISHABLE_KEY_PREFIX}...) may not ${what}: it opens only what a visitor of the project's web page or app may do ` +
      '(sign-up, sign-in, password reset, e-mail verification, the data API under row level security, storage under public policies, ' +
      'public functions). Use the secret API key (tsk_...) on a server, or an end-user access token.',
    { key_kind: 'publishable' },
  );
}

/** The first root field of `fields` the publishable key may not run, if any (introspection fields are the router's). */
export function publishableBlocked(fields: readonly string[]): string | undefined {
  return fields.find((f) => !f.startsWith('__') && !PUBLISHABLE_FIELDS.has(f));
}

const HOW = "the project's secret API key (X-Api-Key), or a client_credentials token of a client granted";

/** Why `principal` may not run admin operations of `scope`; null when it may. */
export function adminRefusal(principal: Principal, scope: AdminScope): AppError | null {
  switch (principal.kind) {
    case 'internal':
      return null;
    case 'project':
      // The secret API key carries no client; a client_credentials token carries the scopes its client was granted.
      if (principal.clientId === undefined) return null;
      if (principal.scopes?.includes(scope) || principal.scopes?.includes(ADMIN_ALL)) return null;
      return new AppError(
        'FORBIDDEN',
        `This is an admin operation: it needs ${HOW} the "${scope}" (or "${ADMIN_ALL}") scope; this token's scopes do not include it`,
        {
          required_scope: scope,
        },
      );
    case 'anonymous':
      return errors.unauthenticated(`This is an admin operation: it needs ${HOW} the "${scope}" scope`);
    case 'publishable':
      return publishableRefusal(`run admin operations ("${scope}")`);
    default:
      return new AppError(
        'FORBIDDEN',
        `This is an admin operation: it needs ${HOW} the "${scope}" scope; ${principal.kind === 'user' ? 'end-user' : 'tenant'} tokens may not`,
        {
          required_scope: scope,
        },
      );
  }
}

/** Whether `principal` may run every admin operation (the platform, the secret key, a client granted `admin`). */
export function holdsEveryAdminScope(principal: Principal): boolean {
  if (principal.kind === 'internal') return true;
  return (
    principal.kind === 'project' && (principal.clientId === undefined || principal.scopes?.includes(ADMIN_ALL) === true)
  );
}

/**
 * The principal of the operation a subgraph executor is running, for the principals that may not run every admin
 * operation (set by platform/subgraph.ts; the others, most requests, pay nothing for it).
 */
export const currentPrincipal = new AsyncLocalStorage<Principal>();

/**
 * Throws unless the principal of the running operation may use admin operations of `scope`. For the few
 * spots a root field cannot reveal (an action chosen by an argument); root fields are checked by the executor.
 */
export function requireAdminScope(scope: AdminScope): void {
  const principal = currentPrincipal.getStore();
  // No principal stored: the executor runs one that holds every admin scope (or this is platform code, outside any).
  if (!principal) return;
  const refusal = adminRefusal(principal, scope);
  if (refusal) throw refusal;
}

/**
 * The operator API (`/admin/api/v1`, platform/auth.ts `operator`): root fields only an operator key may run, and the
 * only ones it may run. Checked by every subgraph executor (platform/subgraph.ts) before anything runs: another
 * principal running one of these is refused (401 anonymous, 403 any other credential), and the operator running
 * anything else (a tenant's, a project's, an end-user's field) is refused too. `_entities` stays open to the operator so
 * that the admin API's `Project` answers gather the usage other subgraphs add to the entity (their field resolvers
 * decide whether the operator may read them).
 */
export const OPERATOR_FIELDS: ReadonlySet<string> = new Set([
  'adminPlans',
  'createPlan',
  'updatePlan',
  'deletePlan',
  'adminSettings',
  'setDefaultPlan',
  'adminTenants',
  'adminTenant',
  'setTenantPlan',
  'suspendTenant',
  'resumeTenant',
  'adminProjects',
  'adminProject',
  'suspendProject',
  'resumeProject',
  'operatorAudit',
  'operatorKeys',
  'createOperatorKey',
  'revokeOperatorKey',
  // the project servers (data subgraph, issue 29)
  'adminServers',
  'adminServer',
  'addProjectServer',
  'updateProjectServer',
  'removeProjectServer',
  // Online moves of project databases (data subgraph, issue 29).
  'adminProjectMove',
  'adminProjectMoves',
  'moveProject',
  'drainProjectServer',
]);

/** Federation plumbing an operator's admin query plans through (never a root field of its own). */
const OPERATOR_PLUMBING: ReadonlySet<string> = new Set(['_entities', '_service']);

/** Whether the root fields include an operator-only one. */
export function operatorOnly(fields: readonly string[]): boolean {
  return fields.some((f) => OPERATOR_FIELDS.has(f));
}

/** The first root field an operator key may not run (anything outside the admin API), if any. */
export function operatorBlocked(fields: readonly string[]): string | undefined {
  return fields.find((f) => !f.startsWith('__') && !OPERATOR_FIELDS.has(f) && !OPERATOR_PLUMBING.has(f));
}

/** Why `principal` may not run the admin API's operator fields; null when it may (the operator, the platform). */
export function operatorRefusal(principal: Principal): AppError | null {
  if (principal.kind === 'operator' || principal.kind === 'internal') return null;
  const how = 'the admin API needs an operator key (Authorization: Bearer top_...)';
  if (principal.kind === 'anonymous') return errors.unauthenticated(`This is an operator operation: ${how}`);
  return new AppError('FORBIDDEN', `This is an operator operation: ${how}; a ${principal.kind} credential may not`, {
    key_kind: principal.kind,
  });
}

/**
 * Throws `operatorRefusal` unless `principal` is the operator (or the platform). For the fields of `OperatorTenant`
 * that storage, data and functions add (usage totals): the root fields reaching that type are operator-only already,
 * this keeps a field from answering anyone else whichever way its `_entities` call came.
 */
export function requireOperatorPrincipal(principal: Principal): void {
  const refusal = operatorRefusal(principal);
  if (refusal) throw refusal;
}
/** The 403 an operator key gets outside the admin API. */
export function operatorOutsideAdmin(what: string): AppError {
  return new AppError(
    'FORBIDDEN',
    `An operator key opens only the admin API (/admin/api/v1); it may not ${what}. Use a tenant token or a project key.`,
    { key_kind: 'operator' },
  );
}
