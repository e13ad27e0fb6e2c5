// Admin operations, and who may run them. The one place that knows which operations are "admin": the
// GraphQL root fields below, grouped by the scope that opens them to a client_credentials token. Every
// subgraph executor (platform/subgraph.ts) checks the root fields of each operation it runs against this
// table before anything executes, whichever way the operation came in (a REST row, /graphql, the gateway,
// a split-mode hop, another subgraph through the router). What a field cannot tell alone (a `rawSQL`
// operation inside `dataTransaction`) asks `requireAdminScope` at the single spot that runs it.
//
// Who passes: the platform itself (`internal`), the project's secret API key, and a client_credentials
// token whose client was granted the operation's scope (or `admin`, every admin scope) by the tenant. End
// users, tenants' own tokens and anonymous callers never do. A second kind of project key (the browser's
// publishable key) is to be refused here, in `adminRefusal`, like any other principal without the grant.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Kind, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { Principal } from './auth.ts';
import { AppError, errors } from './errors.ts';

/** The scope that opens every admin operation. */
export const ADMIN_ALL = 'admin';

/** Admin scopes → what they open (README and docs/architecture.md carry the same table; a test compares). */
export const ADMIN_SCOPES = {
  'admin:sql': {
    operations: 'rawSQL: `POST /v1/rawSQL`, and a `rawSQL` operation inside `POST /v1/transaction`',
    fields: ['dataRawSql'],
  },
  'admin:functions': {
    operations: 'edge function definitions, database hooks, webhook receivers, cron jobs, executions, their step logs and stats',
    fields: [
      'edgeFunctions', 'edgeFunction', 'createEdgeFunction', 'updateEdgeFunction', 'deleteEdgeFunction',
      'functionHooks', 'createFunctionHook', 'deleteFunctionHook',
      'webhookReceivers', 'createWebhookReceiver', 'deleteWebhookReceiver',
      'cronJobs', 'createCronJob', 'updateCronJob', 'deleteCronJob',
      'functionExecutions', 'functionExecution', 'functionExecutionEvents', 'functionStats',
    ],
  },
  'admin:secrets': {
    operations: 'function secrets (list names, set, delete)',
    fields: ['functionSecrets', 'setFunctionSecret', 'deleteFunctionSecret'],
  },
  'admin:email': {
    operations: 'e-mail configuration (SMTP settings, test send) and e-mail templates',
    fields: [
      'emailConfig', 'setEmailConfig', 'deleteEmailConfig', 'testEmailConfig',
      'emailTemplates', 'emailTemplate', 'createEmailTemplate', 'updateEmailTemplate', 'deleteEmailTemplate', 'previewEmailTemplate',
    ],
  },
  'admin:storage': {
    operations: 'storage policies (list, create, delete)',
    fields: ['storagePolicies', 'createStoragePolicy', 'deleteStoragePolicy'],
  },
  'admin:users': {
    operations: 'the end-user admin API (`/admin/users`: list, search, get, update app metadata and roles, disable, enable, delete, revoke sessions, reset MFA)',
    fields: [
      'projectEndUsers', 'projectEndUser', 'updateProjectEndUser', 'disableProjectEndUser', 'enableProjectEndUser', 'deleteProjectEndUser',
      'revokeProjectEndUserSessions', 'resetProjectEndUserMfa',
    ],
  },
} as const satisfies Record<string, { operations: string; fields: readonly string[] }>;

export type AdminScope = keyof typeof ADMIN_SCOPES;

/** Every scope a tenant may grant a client for admin operations (`admin` and the narrower ones). */
export const ADMIN_SCOPE_NAMES: readonly string[] = [ADMIN_ALL, ...Object.keys(ADMIN_SCOPES)];

const FIELD_SCOPE = new Map<string, AdminScope>(
  Object.entries(ADMIN_SCOPES).flatMap(([scope, def]) => def.fields.map((f) => [f, scope as AdminScope] as const)),
);

/** The admin scope of a root field, if it is an admin operation. */
export function adminScopeOfField(field: string): AdminScope | undefined {
  return FIELD_SCOPE.get(field);
}

/** Whether a scope names an admin grant (`admin` or `admin:<area>`): only client_credentials tokens may carry one. */
export function isAdminScope(scope: string): boolean {
  return scope === ADMIN_ALL || scope.startsWith(`${ADMIN_ALL}:`);
}

/** The admin scopes an operation document needs: those of its root fields (fragments at the root included). */
export function adminScopesOf(doc: DocumentNode): AdminScope[] {
  const found = new Set<AdminScope>();
  const fragments = new Map(doc.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d.selectionSet]));
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode): void => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const scope = FIELD_SCOPE.get(sel.name.value);
        if (scope) found.add(scope);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet);
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
      return new AppError('FORBIDDEN', `This is an admin operation: it needs ${HOW} the "${scope}" (or "${ADMIN_ALL}") scope; this token's scopes do not include it`, {
        required_scope: scope,
      });
    case 'anonymous':
      return errors.unauthenticated(`This is an admin operation: it needs ${HOW} the "${scope}" scope`);
    default:
      return new AppError('FORBIDDEN', `This is an admin operation: it needs ${HOW} the "${scope}" scope; ${principal.kind === 'user' ? 'end-user' : 'tenant'} tokens may not`, {
        required_scope: scope,
      });
  }
}

/** The principal of the operation a subgraph executor is running (set by platform/subgraph.ts). */
export const currentPrincipal = new AsyncLocalStorage<Principal>();

/**
 * Throws unless the principal of the running operation may use admin operations of `scope`. For the few
 * spots a root field cannot reveal (an action chosen by an argument); root fields are checked by the executor.
 */
export function requireAdminScope(scope: AdminScope): void {
  const principal = currentPrincipal.getStore();
  // Outside an executor there is no caller to check: only platform code runs there.
  if (!principal) return;
  const refusal = adminRefusal(principal, scope);
  if (refusal) throw refusal;
}
