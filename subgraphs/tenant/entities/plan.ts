import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** A subscription plan and its limits (seeded by the initial migration; listed publicly). */
export const PlanEntity = defineEntity({
  name: 'Plan',
  tableName: 'plans',
  properties: {
    id: p.text().primary(),
    name: p.text(),
    description: p.text(),
    maxProjects: p.integer(),
    maxStorageBytes: p.bigint('number'),
    maxUploadBytes: p.bigint('number'),
    maxDatabaseRows: p.bigint('number'),
    maxFunctionInvocationsPerMonth: p.bigint('number'),
    maxRequestsPerMinute: p.integer(),
    priceCentsPerMonth: p.integer(),
    sortOrder: p.integer(),
  },
});

export type Plan = InferEntity<typeof PlanEntity>;
