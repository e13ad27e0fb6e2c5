import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/**
 * A plan and its limits: the operator's to create and change (seeded by migrations; listed publicly). A null limit
 * is no limit; a null price is not shown.
 */
export const PlanEntity = defineEntity({
  name: 'Plan',
  tableName: 'plans',
  properties: {
    id: p.text().primary(),
    name: p.text(),
    description: p.text(),
    maxProjects: p.integer().nullable(),
    maxStorageBytes: p.bigint('number').nullable(),
    maxUploadBytes: p.bigint('number').nullable(),
    maxDatabaseRows: p.bigint('number').nullable(),
    maxDatabaseBytes: p.bigint('number').nullable(),
    maxFunctionInvocationsPerMonth: p.bigint('number').nullable(),
    maxRequestsPerMinute: p.integer().nullable(),
    minCronIntervalSeconds: p.integer().nullable(),
    maxCronJobs: p.integer().nullable(),
    maxConcurrentFunctionRuns: p.integer().nullable(),
    maxAsyncInvokesPerRun: p.integer().nullable(),
    maxQueuedFunctionRuns: p.integer().nullable(),
    maxRealtimeSubscribers: p.integer().nullable(),
    maxPendingUploads: p.integer().nullable(),
    maxDatabaseConnections: p.integer().nullable(),
    databaseCpuSecondsPerMinute: p.float().nullable(),
    priceCentsPerMonth: p.integer().nullable(),
    sortOrder: p.integer(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type Plan = InferEntity<typeof PlanEntity>;
