// The functions subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { FunctionsInitialMigration } from './0001-initial.ts';
import { FunctionsHooksMigration } from './0002-hooks.ts';
import { FunctionsLeanStepLogMigration } from './0003-lean-step-log.ts';
import { FunctionsRunCountsMigration } from './0005-run-counts.ts';
import { FunctionsPublicMigration } from './0004-public-functions.ts';
import { FunctionsIdempotencyMigration } from './0006-idempotency.ts';
import { FunctionsVersionsReplayMigration } from './0007-versions-replay.ts';
import { FunctionsEventSubscriptionsMigration } from './0008-event-subscriptions.ts';
import { FunctionsStepLogColumnMigration } from './0009-step-log-column.ts';
import { FunctionsPlanLimitsMigration } from './0010-plan-limits.ts';
import { FunctionsCronLastTickMigration } from './0011-cron-last-tick.ts';
import { FunctionsQueuedRunsMigration } from './0012-queued-runs.ts';

export const functionsMigrations: MigrationObject[] = [
  { name: '0001-functions-initial', class: FunctionsInitialMigration },
  { name: '0002-functions-hooks', class: FunctionsHooksMigration },
  { name: '0003-functions-lean-step-log', class: FunctionsLeanStepLogMigration },
  { name: '0004-functions-public', class: FunctionsPublicMigration },
  { name: '0005-functions-run-counts', class: FunctionsRunCountsMigration },
  { name: '0006-functions-idempotency', class: FunctionsIdempotencyMigration },
  { name: '0007-functions-versions-replay', class: FunctionsVersionsReplayMigration },
  { name: '0008-functions-event-subscriptions', class: FunctionsEventSubscriptionsMigration },
  { name: '0009-functions-step-log-column', class: FunctionsStepLogColumnMigration },
  { name: '0010-functions-plan-limits', class: FunctionsPlanLimitsMigration },
  { name: '0011-functions-cron-last-tick', class: FunctionsCronLastTickMigration },
  { name: '0012-functions-queued-runs', class: FunctionsQueuedRunsMigration },
];
