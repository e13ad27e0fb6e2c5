// Wires the functions services together. Built once per running subgraph.
import { createSecretBox } from '../../../platform/crypto.ts';
import { errors } from '../../../platform/errors.ts';
import { setEventInterest } from '../../../platform/events.ts';
import { schedulerOf } from '../../../platform/jobs.ts';
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { createCronService } from './cron.ts';
import { createEmailService } from './email.ts';
import { createEngine } from './engine.ts';
import { createBackgroundLane } from './background-lane.ts';
import { loadPressure } from '../../../platform/load-pressure.ts';
import { createEventDeliveryService } from './event-deliveries.ts';
import { createEventSubscriptionService, INTEREST_CONSUMER } from './event-subscriptions.ts';
import { createExecutionService } from './executions.ts';
import { createFunctionService } from './functions.ts';
import { announceHooksChanged, createHookService } from './hooks.ts';
import { createIdempotency } from './idempotency.ts';
import { createInvokeService } from './invoke.ts';
import { createLocations } from './locations.ts';
import { guardedRequest, OutboundRefused } from './outbound.ts';
import { announceFunctionsChanged, createReceiverCache, publishFunctionsChanged } from './receiver-cache.ts';
import { createReplayService } from './replay.ts';
import { createSecretService } from './secrets.ts';
import { createHotSql, createSql } from './sql.ts';
import { createWebhookService } from './webhooks.ts';
import { createRunQuota } from './run-quota.ts';
import { createRunLimits } from './run-limits.ts';
import { createPlanLimitsReader } from '../../../platform/plan-limits.ts';

export type FunctionsServices = Awaited<ReturnType<typeof createFunctionsServices>>;

/** Builds every service of the functions subgraph from the platform's dependencies. */
export function createFunctionsServices(deps: SubgraphDeps) {
  const { config, db, logger, databaseUrl, router } = deps;
  if (!config.internalSecret)
    throw errors.unavailable('TESSERA_INTERNAL_SECRET is not set: the functions subgraph cannot seal secrets');
  const box = createSecretBox(config.internalSecret, 'functions:secrets');
  const sql = createSql(db);
  const hot = createHotSql(databaseUrl, logger);
  // The platform's scheduler for this subgraph's jobs (jobs/index.ts, declared in ../index.ts).
  const scheduler = schedulerOf(deps, 'functions');
  const functions = createFunctionService({ sql });
  const secrets = createSecretService({ sql, box });
  const executions = createExecutionService({ sql, hot });
  const email = createEmailService({ sql, box, config, scheduler, logger });
  // Outbound event webhooks: subscriptions (their secrets sealed apart from the functions' secrets) and deliveries.
  const eventBox = createSecretBox(config.internalSecret, 'functions:event-subscriptions');
  const eventSubscriptions = createEventSubscriptionService({
    sql,
    box: eventBox,
    allowPrivate: config.functionsAllowPrivateNetworks,
    changed: async (projectId) => await hooks.changed(projectId),
  });
  const eventDeliveries = createEventDeliveryService({
    sql,
    box: eventBox,
    scheduler,
    logger,
    subscriptions: eventSubscriptions,
    allowPrivate: config.functionsAllowPrivateNetworks,
    retryBaseMs: config.eventRetryBaseMs,
    retryWindowMs: config.eventRetryWindow * 1000,
    timeoutMs: config.eventDeliveryTimeoutMs,
  });
  // The plan's runs per month (its limits come from tenant management through the router).
  const planLimits = createPlanLimitsReader(router);
  const runQuota = createRunQuota({ sql, limits: planLimits, logger });
  // The plan's concurrent runs per project and async invokes per tree of runs.
  const runLimits = createRunLimits({ sql, limits: planLimits });
  const engine = createEngine({
    // Background runs yield to the requests this process answers (services/background-lane.ts).
    lane: createBackgroundLane({ busyFor: loadPressure.busyFor }),
    runQuota,
    runLimits,
    functions,
    secrets,
    executions,
    scheduler,
    router,
    logger,
    email: (projectId, mail, dryRun) => email.queueFromStep(projectId, mail, dryRun),
    onFailed: async (e) =>
      await eventDeliveries.emit({
        projectId: e.projectId,
        type: 'execution.failed',
        at: e.finishedAt,
        data: {
          project_id: e.projectId,
          execution: {
            id: e.id,
            function: e.functionName,
            function_version: e.functionVersion,
            trigger: e.trigger,
            trigger_ref: e.triggerRef,
            error: e.error,
            started_at: e.startedAt.toISOString(),
            finished_at: e.finishedAt.toISOString(),
            duration_ms: e.durationMs,
          },
        },
      }),
    http: async (req) => {
      try {
        return await guardedRequest({ ...req, allowPrivate: config.functionsAllowPrivateNetworks });
      } catch (err) {
        if (err instanceof OutboundRefused) throw Object.assign(new Error(err.message), { refused: true });
        throw err;
      }
    },
  });
  const idempotency = createIdempotency({ sql });
  const receivers = createReceiverCache();
  const invoke = createInvokeService({ sql, engine, idempotency, cache: receivers });
  const webhooks = createWebhookService({ sql, functions, engine, receivers, idempotency });
  const cron = createCronService({ sql, functions, engine, scheduler, logger, limits: planLimits });
  const hooks = createHookService({
    sql,
    functions,
    engine,
    scheduler,
    router,
    logger,
    rowEvents: {
      triggers: (projectId) => eventSubscriptions.rowTriggers(projectId),
      enqueue: (a) => eventDeliveries.emitRows(a),
    },
  });
  const locations = createLocations(config);
  const replay = createReplayService({ functions, executions, engine, secrets });

  /** Removes everything a deleted project had here (idempotent: events may come twice). */
  const removeProject = async (projectId: string) => {
    await cron.cancelProject(projectId);
    await sql.tx(async (tx) => {
      // Event deliveries and their attempts go with their subscriptions (foreign keys); the declared interest in platform events goes too.
      await setEventInterest({ execute: async (q, p) => await tx.run(q, p) }, INTEREST_CONSUMER, projectId, []);
      for (const table of [
        'event_subscriptions',
        'function_hooks',
        'function_idempotency',
        'webhook_receivers',
        'cron_jobs',
        'function_executions',
        'edge_functions',
        'function_secrets',
        'email_templates',
        'email_configs',
        'function_run_counts',
        'function_run_slots',
        'function_fanout',
      ]) {
        await tx.run(`delete from ${table} where project_id = ?`, [projectId]);
      }
      await announceHooksChanged(tx, projectId);
      await publishFunctionsChanged(tx, projectId);
    });
    announceFunctionsChanged(projectId);
  };

  return {
    sql,
    hot,
    scheduler,
    logger,
    databaseUrl,
    functions,
    secrets,
    executions,
    email,
    engine,
    planLimits,
    runQuota,
    runLimits,
    idempotency,
    invoke,
    replay,
    eventSubscriptions,
    eventDeliveries,
    webhooks,
    receivers,
    cron,
    hooks,
    locations,
    removeProject,
  };
}
