// REST rows of edge functions (`/edge/api/v1`): every row of the seed's table (database hooks included),
// plus secrets, `/:id` forms and the e-mail preview and test send.
// The public webhook receiver is a hand-written handler (handlers/functions.ts). Fields are aliased to snake_case.
import type { RouteRow } from '../route-types.ts';

const TAG = 'Edge functions';
const BASE = '/edge/api/v1';

const FUNCTION =
  'id name slug description steps timeout_ms: timeoutMs retries public version created_at: createdAt updated_at: updatedAt';
const SECRET = 'name created_at: createdAt updated_at: updatedAt';
const RECEIVER = 'id slug function description url created_at: createdAt';
const HOOK = 'id table timing events function created_at: createdAt';
const CRON =
  'id name schedule timezone function input enabled next_runs: nextRuns last_run_at: lastRunAt created_at: createdAt updated_at: updatedAt';
const TEMPLATE = 'id name subject html text variables created_at: createdAt updated_at: updatedAt';
const EMAIL_CONFIG = 'host port secure user from has_password: hasPassword updated_at: updatedAt';
const EXECUTION = `id function function_version: functionVersion trigger trigger_ref: triggerRef parent_id: parentId status input output error
  response_status: responseStatus created_at: createdAt started_at: startedAt finished_at: finishedAt duration_ms: durationMs
  replay_of: replayOf replay_from_step: replayFromStep`;
const EVENT = 'seq step kind type attempt input output error duration_ms: durationMs at';
const CHANGE = 'changed from to';
const DURATION = 'from to delta_ms: deltaMs';
const STEP_SUMMARY = 'kind status attempts input output error duration_ms: durationMs';
const SUBSCRIPTION = 'id url events tables description enabled secret created_at: createdAt updated_at: updatedAt';
const DELIVERY = `id subscription_id: subscriptionId message_id: messageId event status attempts next_attempt_at: nextAttemptAt last_attempt_at: lastAttemptAt
  last_status_code: lastStatusCode last_latency_ms: lastLatencyMs last_error: lastError last_response: lastResponse created_at: createdAt delivered_at: deliveredAt payload`;
const ATTEMPT = 'attempt at status_code: statusCode latency_ms: latencyMs response_excerpt: responseExcerpt error';
const SUBS = `${BASE}/event-subscriptions`;
const DIFF_SIDE =
  'id function function_version: functionVersion trigger status created_at: createdAt duration_ms: durationMs replay_of: replayOf replay_from_step: replayFromStep';

const row = (r: Omit<RouteRow, 'tag' | 'auth'>): RouteRow => ({ tag: TAG, auth: 'project', ...r });

export const functionsRoutes: RouteRow[] = [
  row({
    id: 'functions.function.list',
    method: 'GET',
    path: `${BASE}/functions`,
    summary: 'List functions',
    description: 'By name. Query `first` (1-100, default 50) and `after` (the `next_cursor` of the previous page).',
    operation: `query FunctionList($first: Int, $after: String) { edgeFunctions(first: $first, after: $after) { functions: items { ${FUNCTION} } next_cursor: nextCursor } }`,
    status: 200,
    variables: { first: 'query.first', after: 'query.after' },
    unwrap: true,
  }),
  row({
    id: 'functions.function.create',
    method: 'POST',
    path: `${BASE}/functions`,
    summary: 'Create a function',
    description:
      'Body `{name, slug?, description?, steps: [...], timeout_ms?, retries?}`. Steps are `{name, kind, when?, return?, retries?, ...}` of kinds Transform, HTTP, Email, Invoke. ' +
      'Errors name the step and the field: 400 `details: {step, field}`. 409 when the name or slug is taken.',
    operation: `mutation FunctionCreate($input: EdgeFunctionInput!) { function: createEdgeFunction(input: $input) { ${FUNCTION} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.function.get',
    method: 'GET',
    path: `${BASE}/functions/:id`,
    summary: 'Get a function',
    operation: `query FunctionGet($id: ID!) { function: edgeFunction(id: $id) { ${FUNCTION} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.function.update',
    method: 'PUT',
    path: `${BASE}/functions/:id`,
    summary: 'Update a function',
    description: 'Body as for create (the whole definition). The version goes up by one.',
    operation: `mutation FunctionUpdate($id: ID!, $input: EdgeFunctionInput!) { function: updateEdgeFunction(id: $id, input: $input) { ${FUNCTION} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  }),
  row({
    id: 'functions.function.delete',
    method: 'DELETE',
    path: `${BASE}/functions/:id`,
    summary: 'Delete a function',
    description: 'Its webhook receivers and cron jobs go with it.',
    operation: 'mutation FunctionDelete($id: ID!) { deleteEdgeFunction(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.invoke',
    method: 'POST',
    path: `${BASE}/invoke/:name`,
    summary: 'Invoke a function',
    description:
      'The JSON body is the function\'s `input.body`. Sync: the final step\'s output (an `{"error", "status"}` result answers with that status). ' +
      '`?async=true`: 202 `{execution_id, status}`. `?dry_run=true`: no side effects, `{dry_run, status, output, error, trace}`. The `X-Execution-Id` header names the execution. ' +
      'An `Idempotency-Key` header (sync and async) runs the request once: the same key and body within 24 hours answers the first answer with `X-Idempotent-Replay: true`, ' +
      '409 while the first still runs, 422 `IDEMPOTENCY_KEY_REUSED` for another body; a failed run stores nothing. ' +
      "A sync run past the plan's `max_concurrent_function_runs` is 429 `RATE_LIMITED` with `Retry-After`; an async one waits in line.",
    operation: `mutation FunctionInvoke($name: String!, $input: JSON, $async: Boolean, $dryRun: Boolean, $idempotencyKey: String) {
      invokeEdgeFunction(name: $name, input: $input, async: $async, dryRun: $dryRun, idempotencyKey: $idempotencyKey) { status body headers }
    }`,
    status: 200,
    variables: {
      name: 'params.name',
      input: 'json',
      async: 'query.async',
      dryRun: 'query.dry_run',
      idempotencyKey: 'header.idempotency-key',
    },
    response: 'http',
    otherSuccess: {
      202: {
        description: 'Queued (`?async=true`): the scheduler runs it; `X-Execution-Id` names the execution',
        schema: {
          type: 'object',
          required: ['execution_id', 'status'],
          properties: { execution_id: { type: 'string' }, status: { type: 'string', enum: ['queued'] } },
        },
      },
    },
  }),
  row({
    id: 'functions.secret.list',
    method: 'GET',
    path: `${BASE}/secrets`,
    summary: "List the project's secret names",
    description: 'Values are never returned.',
    operation: `query FunctionSecretList { secrets: functionSecrets { ${SECRET} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.secret.set',
    method: 'POST',
    path: `${BASE}/secrets`,
    summary: 'Create or replace a secret',
    description: 'Body `{name, value}`; used in templates as `{{secrets.NAME}}`. Stored encrypted.',
    operation: `mutation FunctionSecretSet($input: FunctionSecretInput!) { secret: setFunctionSecret(input: $input) { ${SECRET} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.secret.delete',
    method: 'DELETE',
    path: `${BASE}/secrets`,
    summary: 'Delete a secret',
    description: 'The name as `?name=` or in the body `{name}`.',
    operation: 'mutation FunctionSecretDelete($name: String!) { deleteFunctionSecret(name: $name) }',
    status: 204,
    variables: { name: 'query.name|body.name' },
  }),
  row({
    id: 'functions.webhook.list',
    method: 'GET',
    path: `${BASE}/webhooks`,
    summary: 'List inbound webhook receivers',
    operation: `query FunctionWebhookList { webhooks: webhookReceivers { ${RECEIVER} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.webhook.create',
    method: 'POST',
    path: `${BASE}/webhooks`,
    summary: 'Create an inbound webhook receiver',
    description:
      "Body `{slug?, function, description?}` (function by name; the slug defaults to the function's). Public URL: `POST /webhooks/<project_id>/<slug>`.",
    operation: `mutation FunctionWebhookCreate($input: WebhookReceiverInput!) { webhook: createWebhookReceiver(input: $input) { ${RECEIVER} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.webhook.delete',
    method: 'DELETE',
    path: `${BASE}/webhooks`,
    summary: 'Delete an inbound webhook receiver',
    description: 'The id as `?id=` or in the body `{id}`.',
    operation: 'mutation FunctionWebhookDelete($id: ID!) { deleteWebhookReceiver(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  }),
  row({
    id: 'functions.hook.list',
    method: 'GET',
    path: `${BASE}/hooks`,
    summary: 'List database hooks',
    description: 'By table, in the order they run.',
    operation: `query FunctionHookList { hooks: functionHooks { ${HOOK} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.hook.create',
    method: 'POST',
    path: `${BASE}/hooks`,
    summary: 'Create a database hook',
    description:
      'Body `{table, timing: "before" | "after", events: ["insert", "update", "delete"], function}` (function by name). ' +
      "The table must exist in the project's database: an unknown table is 400 VALIDATION_FAILED naming it (`details.table`). " +
      'The function gets `input.body = {event, table, timing, row, where, user_id}`. A before-hook runs inside the data API write: ' +
      'an output `{"error", "status"}` refuses it with that status (HOOK_REJECTED), `{"row": {...}}` replaces the row written. ' +
      'An after-hook runs after commit through the scheduler, once per row, retried until it succeeds (at least once).',
    operation: `mutation FunctionHookCreate($input: FunctionHookInput!) { hook: createFunctionHook(input: $input) { ${HOOK} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.hook.delete',
    method: 'DELETE',
    path: `${BASE}/hooks`,
    summary: 'Delete a database hook',
    description: 'The id as `?id=` or in the body `{id}`. Takes effect on the next write.',
    operation: 'mutation FunctionHookDelete($id: ID!) { deleteFunctionHook(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  }),
  row({
    id: 'functions.cron.list',
    method: 'GET',
    path: `${BASE}/cron`,
    summary: 'List cron jobs',
    description: 'Each with its next run times (`next_runs`).',
    operation: `query FunctionCronList { cron_jobs: cronJobs { ${CRON} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.cron.create',
    method: 'POST',
    path: `${BASE}/cron`,
    summary: 'Create a cron job',
    description:
      "Body `{name, schedule, timezone?, function, input?, enabled?}`: a cron expression (5 fields, or 6 with seconds first) in an IANA time zone (default UTC); `input` is the run's `input.body`. " +
      "409 `PLAN_LIMIT_REACHED` (`details.limit`) for a schedule more frequent than the plan's `min_cron_interval_seconds` or a job past its `max_cron_jobs`.",
    operation: `mutation FunctionCronCreate($input: CronJobInput!) { cron_job: createCronJob(input: $input) { ${CRON} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.cron.update',
    method: 'PUT',
    path: `${BASE}/cron/:id`,
    summary: 'Change a cron job',
    description:
      "Body: any of `{name, schedule, timezone, function, input, enabled}`. 409 `PLAN_LIMIT_REACHED` for a new schedule more frequent than the plan's `min_cron_interval_seconds`.",
    operation: `mutation FunctionCronUpdate($id: ID!, $input: CronJobUpdateInput!) { cron_job: updateCronJob(id: $id, input: $input) { ${CRON} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  }),
  row({
    id: 'functions.cron.delete',
    method: 'DELETE',
    path: `${BASE}/cron`,
    summary: 'Delete a cron job',
    description: 'The id as `?id=` or in the body `{id}`.',
    operation: 'mutation FunctionCronDelete($id: ID!) { deleteCronJob(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  }),
  row({
    id: 'functions.emailTemplate.list',
    method: 'GET',
    path: `${BASE}/email-templates`,
    summary: 'List e-mail templates',
    operation: `query FunctionEmailTemplateList { email_templates: emailTemplates { ${TEMPLATE} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.emailTemplate.create',
    method: 'POST',
    path: `${BASE}/email-templates`,
    summary: 'Create an e-mail template',
    description: 'Body `{name, subject, html?, text?}` with `{{ variable }}` placeholders (HTML-escaped in `html`).',
    operation: `mutation FunctionEmailTemplateCreate($input: EmailTemplateInput!) { email_template: createEmailTemplate(input: $input) { ${TEMPLATE} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.emailTemplate.update',
    method: 'PUT',
    path: `${BASE}/email-templates`,
    summary: 'Change an e-mail template',
    description: 'The id as `?id=` or in the body; body: any of `{name, subject, html, text}`.',
    operation: `mutation FunctionEmailTemplateUpdate($id: ID!, $input: EmailTemplateUpdateInput!) { email_template: updateEmailTemplate(id: $id, input: $input) { ${TEMPLATE} } }`,
    status: 200,
    variables: { id: 'query.id|body.id', input: 'body' },
  }),
  row({
    id: 'functions.emailTemplate.delete',
    method: 'DELETE',
    path: `${BASE}/email-templates`,
    summary: 'Delete an e-mail template',
    description: 'The id as `?id=` or in the body `{id}`.',
    operation: 'mutation FunctionEmailTemplateDelete($id: ID!) { deleteEmailTemplate(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  }),
  row({
    id: 'functions.emailTemplate.get',
    method: 'GET',
    path: `${BASE}/email-templates/:id`,
    summary: 'Get an e-mail template',
    operation: `query FunctionEmailTemplateGet($id: ID!) { email_template: emailTemplate(id: $id) { ${TEMPLATE} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.emailTemplate.preview',
    method: 'POST',
    path: `${BASE}/email-templates/:id/preview`,
    summary: 'Render an e-mail template',
    description: 'Body `{variables}`; sends nothing. Answers `{subject, html, text}`.',
    operation: `mutation FunctionEmailTemplatePreview($id: ID!, $variables: JSON) { preview: previewEmailTemplate(id: $id, variables: $variables) { subject html text } }`,
    status: 200,
    variables: { id: 'params.id', variables: 'body.variables' },
  }),
  row({
    id: 'functions.emailConfig.get',
    method: 'GET',
    path: `${BASE}/email-config`,
    summary: "The project's SMTP settings",
    description: '`{"email_config": null}` when the platform default is used. The password is never returned.',
    operation: `query FunctionEmailConfigGet { email_config: emailConfig { ${EMAIL_CONFIG} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.emailConfig.set',
    method: 'POST',
    path: `${BASE}/email-config`,
    summary: 'Set the SMTP settings',
    description:
      'Body `{host, port?, secure?, user?, password?, from}`; the password is stored encrypted (left out: the stored one stays).',
    operation: `mutation FunctionEmailConfigSet($input: EmailConfigInput!) { email_config: setEmailConfig(input: $input) { ${EMAIL_CONFIG} } }`,
    status: 200,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.emailConfig.delete',
    method: 'DELETE',
    path: `${BASE}/email-config`,
    summary: 'Delete the SMTP settings',
    operation: 'mutation FunctionEmailConfigDelete { deleteEmailConfig }',
    status: 204,
    variables: {},
  }),
  row({
    id: 'functions.emailConfig.test',
    method: 'POST',
    path: `${BASE}/email-config/test`,
    summary: 'Send a test e-mail',
    description: 'Body `{to}`. Sent at once; 502 UPSTREAM_FAILED with the SMTP error when the server refuses.',
    operation:
      'mutation FunctionEmailConfigTest($to: String!) { result: testEmailConfig(to: $to) { sent message_id: messageId } }',
    status: 200,
    variables: { to: 'body.to' },
    unwrap: true,
  }),
  row({
    id: 'functions.execution.list',
    method: 'GET',
    path: `${BASE}/executions`,
    summary: 'List executions',
    description:
      'Newest first. Query `function`, `status`, `trigger`, `since`, `until` (ISO 8601), `first` (1-100, default 20), `after`.',
    operation: `query FunctionExecutionList($function: String, $status: String, $trigger: String, $since: String, $until: String, $first: Int, $after: String) {
      functionExecutions(function: $function, status: $status, trigger: $trigger, since: $since, until: $until, first: $first, after: $after) {
        executions: items { ${EXECUTION} } next_cursor: nextCursor
      }
    }`,
    status: 200,
    variables: {
      function: 'query.function',
      status: 'query.status',
      trigger: 'query.trigger',
      since: 'query.since',
      until: 'query.until',
      first: 'query.first',
      after: 'query.after',
    },
    unwrap: true,
  }),
  row({
    id: 'functions.execution.get',
    method: 'GET',
    path: `${BASE}/executions/:id`,
    summary: 'Execution detail',
    operation: `query FunctionExecutionGet($id: ID!) { execution: functionExecution(id: $id) { ${EXECUTION} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.execution.events',
    method: 'GET',
    path: `${BASE}/executions/:id/events`,
    summary: 'Step-by-step log of an execution',
    operation: `query FunctionExecutionEvents($id: ID!) { events: functionExecutionEvents(id: $id) { ${EVENT} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.execution.replay',
    method: 'POST',
    path: `${BASE}/executions/:id/replay`,
    summary: 'Replay an execution from a step',
    description:
      'Body (all optional) `{from_step?, input?, use_current_definition?}`. Re-runs the finished execution from `from_step` (default: the step it failed at, else the first) ' +
      'with the results it recorded for the earlier steps, which are not run again (their step-log lines say `reused`); runs the version it ran (or the current one), ' +
      'with the recorded input or `input` as `input.body`, and secrets as they are now. Answers the new execution (`trigger: "replay"`, `replay_of`), which may itself have failed. ' +
      '409 while the execution runs, when a step before `from_step` has no recorded result, or when the version it ran was not kept.',
    operation: `mutation FunctionExecutionReplay($id: ID!, $input: ReplayExecutionInput) { execution: replayFunctionExecution(id: $id, input: $input) { ${EXECUTION} } }`,
    status: 201,
    variables: { id: 'params.id', input: 'body' },
  }),
  row({
    id: 'functions.execution.diff',
    method: 'GET',
    path: `${BASE}/executions/:id/diff/:other`,
    summary: 'What changed between two executions',
    description:
      'Input, output, status, error and duration of `:id` (from) and `:other` (to), each `{changed, from, to}` (durations `{from, to, delta_ms}`), ' +
      "then step by step: each step's summary in both (`status`, `attempts`, resolved `input`, `output`, `error`, `duration_ms`; null where it did not run) and what changed.",
    operation: `query FunctionExecutionDiff($id: ID!, $other: ID!) {
      diff: functionExecutionDiff(id: $id, other: $other) {
        from { ${DIFF_SIDE} } to { ${DIFF_SIDE} }
        input { ${CHANGE} } output { ${CHANGE} } status { ${CHANGE} } error { ${CHANGE} } duration_ms: durationMs { ${DURATION} }
        steps { step from { ${STEP_SUMMARY} } to { ${STEP_SUMMARY} } input { ${CHANGE} } output { ${CHANGE} } status { ${CHANGE} } duration_ms: durationMs { ${DURATION} } }
      }
    }`,
    status: 200,
    variables: { id: 'params.id', other: 'params.other' },
  }),
  row({
    id: 'functions.eventSubscription.list',
    method: 'GET',
    path: SUBS,
    summary: 'List outbound event subscriptions',
    description: 'Oldest first. Secrets are not shown (only by create and rotate-secret).',
    operation: `query FunctionEventSubscriptionList { event_subscriptions: eventSubscriptions { ${SUBSCRIPTION} } }`,
    status: 200,
    variables: {},
  }),
  row({
    id: 'functions.eventSubscription.create',
    method: 'POST',
    path: SUBS,
    summary: 'Subscribe a URL to events',
    description:
      'Body `{url, events, tables?, description?, enabled?, secret?}`. Events: `row.inserted`, `row.updated`, `row.deleted` (on `tables`), `user.registered`, `user.signed_in`, ' +
      '`storage.object.created`, `storage.object.deleted`, `execution.failed`. Each event is POSTed as `{type, timestamp, data}` signed the Standard Webhooks way ' +
      '(`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`), retried with exponential backoff and jitter for up to a day, then dead-lettered. ' +
      'The answer carries the signing `secret` (`whsec_...`), shown again only by rotate-secret.',
    operation: `mutation FunctionEventSubscriptionCreate($input: EventSubscriptionInput!) { event_subscription: createEventSubscription(input: $input) { ${SUBSCRIPTION} } }`,
    status: 201,
    variables: { input: 'body' },
  }),
  row({
    id: 'functions.eventSubscription.get',
    method: 'GET',
    path: `${SUBS}/:id`,
    summary: 'Get an event subscription',
    operation: `query FunctionEventSubscriptionGet($id: ID!) { event_subscription: eventSubscription(id: $id) { ${SUBSCRIPTION} } }`,
    status: 200,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.eventSubscription.update',
    method: 'PUT',
    path: `${SUBS}/:id`,
    summary: 'Change an event subscription',
    description:
      'Body: any of `{url, events, tables, description, enabled}` (the secret changes only by rotate-secret). Disabling dead-letters its pending deliveries.',
    operation: `mutation FunctionEventSubscriptionUpdate($id: ID!, $input: EventSubscriptionUpdateInput!) { event_subscription: updateEventSubscription(id: $id, input: $input) { ${SUBSCRIPTION} } }`,
    status: 200,
    variables: { id: 'params.id', input: 'body' },
  }),
  row({
    id: 'functions.eventSubscription.delete',
    method: 'DELETE',
    path: `${SUBS}/:id`,
    summary: 'Delete an event subscription',
    description: 'Its delivery log goes with it; deliveries not yet made are dropped.',
    operation: 'mutation FunctionEventSubscriptionDelete($id: ID!) { deleteEventSubscription(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.eventSubscription.deleteByQuery',
    method: 'DELETE',
    path: SUBS,
    summary: 'Delete an event subscription (id in the query or body)',
    description: 'The id as `?id=` or in the body `{id}`.',
    operation: 'mutation FunctionEventSubscriptionDeleteByQuery($id: ID!) { deleteEventSubscription(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  }),
  row({
    id: 'functions.eventSubscription.rotateSecret',
    method: 'POST',
    path: `${SUBS}/:id/rotate-secret`,
    summary: "Rotate a subscription's signing secret",
    description:
      'Body (optional) `{secret}`: your own `whsec_...` (base64 of 24 to 64 bytes); default a new random one. The answer carries it, once.',
    operation: `mutation FunctionEventSubscriptionRotate($id: ID!, $secret: String) { event_subscription: rotateEventSubscriptionSecret(id: $id, secret: $secret) { ${SUBSCRIPTION} } }`,
    status: 200,
    variables: { id: 'params.id', secret: 'body.secret' },
  }),
  row({
    id: 'functions.eventSubscription.test',
    method: 'POST',
    path: `${SUBS}/:id/test`,
    summary: 'Send a test event to a subscription',
    description:
      'Queues a `subscription.test` event for this subscription only; answers its delivery (follow it in the delivery log).',
    operation: `mutation FunctionEventSubscriptionTest($id: ID!) { delivery: testEventSubscription(id: $id) { ${DELIVERY} } }`,
    status: 202,
    variables: { id: 'params.id' },
  }),
  row({
    id: 'functions.eventDelivery.list',
    method: 'GET',
    path: `${SUBS}/:id/deliveries`,
    summary: "A subscription's delivery log",
    description:
      "Newest first. Query `status` (pending, delivering, succeeded, dead), `event`, `first` (1-100, default 20), `after`. Each delivery: status, attempts, the last attempt's status code, latency, error and response excerpt.",
    operation: `query FunctionEventDeliveryList($id: ID!, $status: String, $event: String, $first: Int, $after: String) {
      eventDeliveries(subscriptionId: $id, status: $status, event: $event, first: $first, after: $after) { deliveries: items { ${DELIVERY} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: {
      id: 'params.id',
      status: 'query.status',
      event: 'query.event',
      first: 'query.first',
      after: 'query.after',
    },
    unwrap: true,
  }),
  row({
    id: 'functions.eventDelivery.get',
    method: 'GET',
    path: `${SUBS}/:id/deliveries/:delivery_id`,
    summary: 'One delivery with every attempt',
    operation: `query FunctionEventDeliveryGet($id: ID!, $deliveryId: ID!) { delivery: eventDelivery(subscriptionId: $id, id: $deliveryId) { ${DELIVERY} attempt_log: attemptLog { ${ATTEMPT} } } }`,
    status: 200,
    variables: { id: 'params.id', deliveryId: 'params.delivery_id' },
  }),
  row({
    id: 'functions.eventDelivery.redeliver',
    method: 'POST',
    path: `${SUBS}/:id/deliveries/:delivery_id/redeliver`,
    summary: 'Deliver an event again',
    description:
      'A dead, succeeded or pending delivery is attempted again now, with a new retry window (same `webhook-id`). 409 while an attempt is under way.',
    operation: `mutation FunctionEventDeliveryRedeliver($id: ID!, $deliveryId: ID!) { delivery: redeliverEvent(subscriptionId: $id, id: $deliveryId) { ${DELIVERY} } }`,
    status: 202,
    variables: { id: 'params.id', deliveryId: 'params.delivery_id' },
  }),
  row({
    id: 'functions.stats',
    method: 'GET',
    path: `${BASE}/stats`,
    summary: 'Execution statistics',
    description:
      'Counts by status and p50/p95 duration per function. Query `since`, `until` (ISO 8601; default the last 24 hours).',
    operation: `query FunctionStats($since: String, $until: String) {
      functionStats(since: $since, until: $until) {
        since until functions { function total queued running succeeded failed p50_ms: p50Ms p95_ms: p95Ms }
      }
    }`,
    status: 200,
    variables: { since: 'query.since', until: 'query.until' },
    unwrap: true,
  }),
];
