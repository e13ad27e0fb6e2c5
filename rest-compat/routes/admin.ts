// REST rows of the operator's admin API (`/admin/api/v1`): plans, the default plan, accounts, projects, suspension,
// the audit log and operator keys. An operator key only (`auth: 'operator'`); fields aliased to snake_case.
import type { RouteRow } from '../route-types.ts';

const TAG = 'Operator';
const BASE = '/admin/api/v1';

const LIMITS = `limits {
  max_projects: maxProjects max_storage_bytes: maxStorageBytes max_upload_bytes: maxUploadBytes
  max_database_rows: maxDatabaseRows max_database_bytes: maxDatabaseBytes
  max_function_invocations_per_month: maxFunctionInvocationsPerMonth max_requests_per_minute: maxRequestsPerMinute
  min_cron_interval_seconds: minCronIntervalSeconds max_cron_jobs: maxCronJobs
  max_concurrent_function_runs: maxConcurrentFunctionRuns max_async_invokes_per_run: maxAsyncInvokesPerRun
  max_queued_function_runs: maxQueuedFunctionRuns
  max_realtime_subscribers: maxRealtimeSubscribers max_pending_uploads: maxPendingUploads
  max_database_connections: maxDatabaseConnections database_cpu_seconds_per_minute: databaseCpuSecondsPerMinute
}`;
const PLAN = `id name description price_cents_per_month: priceCentsPerMonth sort_order: sortOrder ${LIMITS}
  tenant_count: tenantCount default created_at: createdAt updated_at: updatedAt`;
const SETTINGS = 'default_plan: defaultPlan default_plan_source: defaultPlanSource';
// An account's usage: its projects' together, each total computed by the subgraph that owns it (`@requires` ids).
const TENANT_USAGE = `storage_usage: storageUsage { objects bytes pending_objects: pendingObjects pending_bytes: pendingBytes }
  database_usage: databaseUsage { rows bytes unmeasured }
  function_usage: functionUsage { runs_this_month: runsThisMonth running_now: runningNow cron_jobs: cronJobs }`;
const TENANT = `id email name plan { id name } project_count: projectCount suspended_at: suspendedAt
  suspended_reason: suspendedReason created_at: createdAt ${TENANT_USAGE}`;
const TENANT_USAGE_DOC =
  'Each account carries the usage of all its projects together: `storage_usage` (`objects`, `bytes` of ready files, `pending_objects`, `pending_bytes` of unconfirmed uploads), `database_usage` (`rows`: live rows, `bytes`: size on disk of its project databases, `unmeasured`: databases left out because their server could not be reached now) and `function_usage` (`runs_this_month`, `running_now`, `cron_jobs`); zeros for an account without projects.';
const STORAGE_USAGE = `storage_usage: storageUsage { objects bytes pending_objects: pendingObjects pending_bytes: pendingBytes
  quota_bytes: quotaBytes }`;
const DATABASE_USAGE = 'database_usage: databaseUsage { rows bytes max_rows: maxRows max_bytes: maxBytes }';
const FUNCTION_USAGE =
  'function_usage: functionUsage { runs_this_month: runsThisMonth running_now: runningNow cron_jobs: cronJobs }';
const PROJECT = `id name tenant: owner { id email } plan { id name } suspended_at: suspendedAt
  suspended_reason: suspendedReason created_at: createdAt server: databaseServer ${STORAGE_USAGE} ${DATABASE_USAGE} ${FUNCTION_USAGE}`;
const AUDIT = 'id at operator action target_kind: targetKind target_id: targetId details';
const KEY =
  'id name key_prefix: keyPrefix created_at: createdAt created_by: createdBy last_used_at: lastUsedAt revoked_at: revokedAt';
const LIMITS_DOC =
  '`limits` holds any of the 16 limits in snake_case (as `GET /auth/api/v1/plans` shows them): whole numbers ≥ 0 (≥ 1 for `min_cron_interval_seconds` and `max_database_connections`; `database_cpu_seconds_per_minute` above 0), or null for no limit';
const PAGE_DOC = 'Query `first` (1-100, default 50) and `after` (the `next_cursor` of the previous page).';
const AUDITED = 'Written to the audit log (`GET /admin/api/v1/audit`) in the same transaction.';
// The project servers (issue 29): never the URL's password, in no answer.
const SERVER = `id state weight built_in: builtIn url host port database user projects
  health { reachable error version max_connections: maxConnections project_connections: projectConnections
    connections database_bytes: databaseBytes measured_at: measuredAt }
  created_at: createdAt updated_at: updatedAt`;
const SERVER_DOC =
  '`url` is shown without its password (`postgres://user@host:port/database`); `health` is measured now (a short connection, 3 s to connect): `reachable` (else `error`), `version`, `max_connections`, `project_connections` (open to the project databases there), `connections` (all clients), `database_bytes` (the project databases there)';

export const adminRoutes: RouteRow[] = [
  {
    id: 'admin.plans.list',
    method: 'GET',
    path: `${BASE}/plans`,
    summary: 'List plans (operator)',
    description:
      "Every plan with its limits (null: no limit), price (null: none shown), how many accounts are on it (`tenant_count`) and whether new accounts get it (`default`), in the public list's order.",
    tag: TAG,
    auth: 'operator',
    operation: `query AdminPlans { plans: adminPlans { ${PLAN} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'admin.plans.create',
    method: 'POST',
    path: `${BASE}/plans`,
    summary: 'Create a plan (operator)',
    description: `Body \`{id, name, description?, price_cents_per_month?, limits?}\`: \`id\` is 1 to 40 lower case letters, digits and dashes; ${LIMITS_DOC}; limits left out have no limit. 409 CONFLICT on a taken id. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminPlanCreate($input: CreatePlanInput!) { createPlan(input: $input) { ${PLAN} } }`,
    status: 201,
    variables: { input: 'body-deep' },
    unwrap: true,
    errors: [409],
  },
  {
    id: 'admin.plans.update',
    method: 'PATCH',
    path: `${BASE}/plans/:id`,
    summary: 'Change a plan (operator)',
    description: `Body \`{name?, description?, price_cents_per_month?, sort_order?, limits?}\`; ${LIMITS_DOC}; omitted fields stay. The change applies at once to every project of the plan's accounts, in every process. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminPlanUpdate($id: ID!, $input: UpdatePlanInput!) { updatePlan(id: $id, input: $input) { ${PLAN} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body-deep' },
    unwrap: true,
  },
  {
    id: 'admin.plans.delete',
    method: 'DELETE',
    path: `${BASE}/plans/:id`,
    summary: 'Delete a plan (operator)',
    description: `409 PLAN_IN_USE while an account is on it or while it is the default plan for new accounts. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: 'mutation AdminPlanDelete($id: ID!) { deletePlan(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
    errors: [409],
  },
  {
    id: 'admin.settings.get',
    method: 'GET',
    path: `${BASE}/settings`,
    summary: 'Read the install settings (operator)',
    description:
      '`{default_plan, default_plan_source}`: the plan new accounts start on, and whether an operator chose it (`operator`) or it comes from TESSERA_DEFAULT_PLAN (`config`).',
    tag: TAG,
    auth: 'operator',
    operation: `query AdminSettings { adminSettings { ${SETTINGS} } }`,
    status: 200,
    variables: {},
    unwrap: true,
  },
  {
    id: 'admin.settings.defaultPlan',
    method: 'PUT',
    path: `${BASE}/settings/default-plan`,
    summary: 'Set the default plan for new accounts (operator)',
    description: `Body \`{plan_id}\`. Kept in the platform database; wins over TESSERA_DEFAULT_PLAN. Accounts already made keep their plan. 404 for an unknown plan. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminSetDefaultPlan($planId: ID!) { setDefaultPlan(planId: $planId) { ${SETTINGS} } }`,
    status: 200,
    variables: { planId: 'body.plan_id' },
    unwrap: true,
  },
  {
    id: 'admin.tenants.list',
    method: 'GET',
    path: `${BASE}/tenants`,
    summary: 'List developer accounts (operator)',
    description: `Oldest first. Query \`search\` (text the e-mail address or name contains, or an account id). ${TENANT_USAGE_DOC} ${PAGE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminTenants($search: String, $first: Int, $after: String) {
      adminTenants(search: $search, first: $first, after: $after) { tenants: items { ${TENANT} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: { search: 'query.search', first: 'query.first', after: 'query.after' },
    unwrap: true,
  },
  {
    id: 'admin.tenants.get',
    method: 'GET',
    path: `${BASE}/tenants/:id`,
    summary: 'Read a developer account (operator)',
    description: `Its plan, project count, suspension and usage. ${TENANT_USAGE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminTenant($id: ID!) { adminTenant(id: $id) { ${TENANT} } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'admin.tenants.setPlan',
    method: 'PUT',
    path: `${BASE}/tenants/:id/plan`,
    summary: "Set an account's plan (operator)",
    description: `Body \`{plan_id}\`. Its projects get the new limits at once. An account already over the new plan's project count keeps its projects; only new ones are refused. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminTenantPlan($id: ID!, $planId: ID!) { setTenantPlan(id: $id, planId: $planId) { ${TENANT} } }`,
    status: 200,
    variables: { id: 'params.id', planId: 'body.plan_id' },
    unwrap: true,
  },
  {
    id: 'admin.tenants.suspend',
    method: 'POST',
    path: `${BASE}/tenants/:id/suspend`,
    summary: 'Suspend a developer account (operator)',
    description: `Body \`{reason?}\`. Its sign-in (after a correct password) and its tokens are refused with 403 TENANT_SUSPENDED, and every call of its projects too; its data is kept. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminTenantSuspend($id: ID!, $reason: String) { suspendTenant(id: $id, reason: $reason) { ${TENANT} } }`,
    status: 200,
    variables: { id: 'params.id', reason: 'body.reason' },
    unwrap: true,
  },
  {
    id: 'admin.tenants.resume',
    method: 'POST',
    path: `${BASE}/tenants/:id/resume`,
    summary: 'End the suspension of a developer account (operator)',
    description: `The account and its projects work again at once. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminTenantResume($id: ID!) { resumeTenant(id: $id) { ${TENANT} } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'admin.projects.list',
    method: 'GET',
    path: `${BASE}/projects`,
    summary: 'List projects (operator)',
    description: `Every project of the install, oldest first, with its owner, plan, suspension and usage (\`storage_usage\`, \`database_usage\`: live rows and bytes against the plan, \`function_usage\`: runs this month, running now, cron jobs). Query \`search\` (text the name contains, or a project id), \`tenant_id\`. ${PAGE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminProjects($search: String, $tenantId: ID, $first: Int, $after: String) {
      adminProjects(search: $search, tenantId: $tenantId, first: $first, after: $after) {
        projects: items { ${PROJECT} } next_cursor: nextCursor
      }
    }`,
    status: 200,
    variables: { search: 'query.search', tenantId: 'query.tenant_id', first: 'query.first', after: 'query.after' },
    unwrap: true,
  },
  {
    id: 'admin.projects.get',
    method: 'GET',
    path: `${BASE}/projects/:id`,
    summary: 'Read a project (operator)',
    description: 'Its owner, plan, suspension and usage. Never its keys.',
    tag: TAG,
    auth: 'operator',
    operation: `query AdminProject($id: ID!) { adminProject(id: $id) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'admin.projects.suspend',
    method: 'POST',
    path: `${BASE}/projects/:id/suspend`,
    summary: 'Suspend a project (operator)',
    description: `Body \`{reason?}\`. Every call for the project (its keys, client and end-user tokens, anonymous calls naming it) is refused with 403 PROJECT_SUSPENDED and its background work stops; its data is kept. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminProjectSuspend($id: ID!, $reason: String) { suspendProject(id: $id, reason: $reason) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id', reason: 'body.reason' },
    unwrap: true,
  },
  {
    id: 'admin.projects.resume',
    method: 'POST',
    path: `${BASE}/projects/:id/resume`,
    summary: 'End the suspension of a project (operator)',
    description: `The project works again at once. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminProjectResume($id: ID!) { resumeProject(id: $id) { ${PROJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'admin.audit.list',
    method: 'GET',
    path: `${BASE}/audit`,
    summary: 'Read the operator audit log (operator)',
    description: `Newest first: when, which operator (the key's name), what (\`plan.update\`, \`tenant.suspend\`, ...), the target and the changed fields. Query \`action\`, \`target_id\`. ${PAGE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminAudit($first: Int, $after: String, $action: String, $targetId: String) {
      operatorAudit(first: $first, after: $after, action: $action, targetId: $targetId) { entries: items { ${AUDIT} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: { first: 'query.first', after: 'query.after', action: 'query.action', targetId: 'query.target_id' },
    unwrap: true,
  },
  {
    id: 'admin.operatorKeys.list',
    method: 'GET',
    path: `${BASE}/operator-keys`,
    summary: 'List operator keys (operator)',
    description:
      'Newest first, revoked ones with when; never the keys themselves. The bootstrap key (TESSERA_OPERATOR_KEY) is not listed.',
    tag: TAG,
    auth: 'operator',
    operation: `query AdminOperatorKeys { operator_keys: operatorKeys { ${KEY} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'admin.operatorKeys.create',
    method: 'POST',
    path: `${BASE}/operator-keys`,
    summary: 'Create an operator key (operator)',
    description: `Body \`{name}\` (who holds it: the audit log names it). Answers \`{id, name, key, key_prefix, created_at}\`: \`key\` (\`top_...\`) is shown this once. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminOperatorKeyCreate($input: CreateOperatorKeyInput!) {
      createOperatorKey(input: $input) { id name key key_prefix: keyPrefix created_at: createdAt }
    }`,
    status: 201,
    variables: { input: 'body' },
    unwrap: true,
  },
  {
    id: 'admin.operatorKeys.revoke',
    method: 'DELETE',
    path: `${BASE}/operator-keys/:id`,
    summary: 'Revoke an operator key (operator)',
    description: `The key is refused at once in every process. Revoking the key you are calling with is allowed: your next call is refused. The bootstrap key (id \`bootstrap\`) cannot be revoked here: 409 CONFLICT, unset TESSERA_OPERATOR_KEY. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: 'mutation AdminOperatorKeyRevoke($id: ID!) { revokeOperatorKey(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
    errors: [409],
  },
  // ── Project servers (issue 29): where project databases live ──
  {
    id: 'admin.servers.list',
    method: 'GET',
    path: `${BASE}/servers`,
    summary: 'List project servers (operator)',
    description: `Every PostgreSQL server where project databases live, the configured \`default\` first: \`state\` (\`active\`, \`draining\`, \`read-only\`), \`weight\`, \`built_in\`, \`projects\`; ${SERVER_DOC}. New projects go to the active server with the fewest projects per unit of weight.`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminServers { servers: adminServers { ${SERVER} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'admin.servers.add',
    method: 'POST',
    path: `${BASE}/servers`,
    summary: 'Register a project server (operator)',
    description: `Body \`{id, url, weight?, state?}\`: \`id\` is 1 to 40 of a-z, 0-9 and \`-\`, starting with a letter; \`url\` \`postgres://user:password@host:port/postgres\` of a role with CREATEDB and CREATEROLE (or a superuser), checked now: 400 naming \`url\` when the server cannot be reached, refuses the login or the role lacks them. The URL is stored sealed and never shown again. \`weight\` 0 to 1000 (default 1), \`state\` \`active\` (default), \`draining\` or \`read-only\`. 409 CONFLICT on a taken id. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminServerAdd($input: AddProjectServerInput!) { addProjectServer(input: $input) { ${SERVER} } }`,
    status: 201,
    variables: { input: 'body' },
    unwrap: true,
    errors: [409],
  },
  {
    id: 'admin.servers.get',
    method: 'GET',
    path: `${BASE}/servers/:id`,
    summary: 'Read a project server (operator)',
    description: `Its state, weight, projects; ${SERVER_DOC}.`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminServer($id: ID!) { adminServer(id: $id) { ${SERVER} } }`,
    status: 200,
    variables: { id: 'params.id' },
    unwrap: true,
  },
  {
    id: 'admin.servers.update',
    method: 'PATCH',
    path: `${BASE}/servers/:id`,
    summary: 'Change a project server (operator)',
    description: `Body \`{state?, weight?, url?}\`; omitted fields stay. \`draining\`, \`read-only\` or weight 0: no new project is placed there (its projects keep working). A new \`url\` is checked like a new server's (400 naming \`url\`); the default server's URL is the configuration's (400). Every process follows at once. ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminServerUpdate($id: ID!, $input: UpdateProjectServerInput!) { updateProjectServer(id: $id, input: $input) { ${SERVER} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
    unwrap: true,
  },
  {
    id: 'admin.servers.remove',
    method: 'DELETE',
    path: `${BASE}/servers/:id`,
    summary: 'Remove a project server (operator)',
    description: `Only a server holding no project: 409 SERVER_IN_USE otherwise (move its projects off first: drain it). The default server cannot be removed (409 CONFLICT). ${AUDITED}`,
    tag: TAG,
    auth: 'operator',
    operation: 'mutation AdminServerRemove($id: ID!) { removeProjectServer(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
    errors: [409],
  },
];

// ── Online moves of project databases between project servers, and drains (data subgraph, issue 29 item 3) ──
const MOVE = `id project_id: projectId from_server: fromServer to_server: toServer state phase mode reason
  error_code: errorCode error tables { table rows } drain_of: drainOf attempts created_at: createdAt
  started_at: startedAt finished_at: finishedAt`;
const MOVE_DOC =
  'A move is `queued`, `running` (its `phase`: prepare, check, schema, copy, hold, catch-up, sequences, verify, switch, switched, drop), `done` (the project lives on `to_server`, the source is dropped) or `failed` (the project stays on `from_server`; `error_code` and `error` say why, and what the move made is removed).';

adminRoutes.push(
  {
    id: 'admin.projects.move',
    method: 'POST',
    path: `${BASE}/projects/:id/move`,
    summary: "Move a project's database to another server (operator)",
    description: `Body \`{server}\`: the id of an active project server. The project's database is copied online (logical replication where both servers allow it, else pg_dump/pg_restore: \`mode\` and \`reason\` say which), its writes held only for the final catch-up and switch (a write then waits, or answers 503 with \`Retry-After\`), verified table by table (rows and checksum), switched, and its source dropped. Answers 202 with the queued move; follow it with \`GET /admin/api/v1/moves/:id\`. 400 for an unknown server, 404 for an unknown project, 409 when the server takes no projects (draining, read-only, weight 0), the project lives there already or is being moved. ${MOVE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `mutation AdminProjectMove($projectId: ID!, $server: String!) { move: moveProject(projectId: $projectId, server: $server) { ${MOVE} } }`,
    status: 202,
    variables: { projectId: 'params.id', server: 'body.server' },
    errors: [409],
  },
  {
    id: 'admin.moves.get',
    method: 'GET',
    path: `${BASE}/moves/:id`,
    summary: 'One move of a project database (operator)',
    description: `${MOVE_DOC} 404 for an unknown id.`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminProjectMoveGet($id: ID!) { move: adminProjectMove(id: $id) { ${MOVE} } }`,
    status: 200,
    variables: { id: 'params.id' },
  },
  {
    id: 'admin.moves.list',
    method: 'GET',
    path: `${BASE}/moves`,
    summary: 'The latest moves of project databases (operator)',
    description: `Newest first. Query \`project_id\` (one project's moves), \`drain_of\` (the moves a drain of that server made) and \`first\` (1-100, default 50). ${MOVE_DOC}`,
    tag: TAG,
    auth: 'operator',
    operation: `query AdminProjectMoveList($projectId: ID, $drainOf: String, $first: Int) {
      moves: adminProjectMoves(projectId: $projectId, drainOf: $drainOf, first: $first) { ${MOVE} }
    }`,
    status: 200,
    variables: { projectId: 'query.project_id', drainOf: 'query.drain_of', first: 'query.first' },
  },
  {
    id: 'admin.servers.drain',
    method: 'POST',
    path: `${BASE}/servers/:id/drain`,
    summary: 'Drain a project server (operator)',
    description:
      'The server is marked `draining` (no new project is placed there) and every project on it is moved, two at a time, to the server placement picks (an active one). Answers 202 `{drain: {server, state}}`; follow the moves with `GET /admin/api/v1/moves?drain_of=ID`. A project whose move fails stays where it is (run the drain again). 404 for an unknown server.',
    tag: TAG,
    auth: 'operator',
    operation: 'mutation AdminServerDrain($id: String!) { drain: drainProjectServer(id: $id) { server state } }',
    status: 202,
    variables: { id: 'params.id' },
  },
);
