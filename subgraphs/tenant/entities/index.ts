// Every entity of the tenant subgraph, in the order the ORM should discover them.
import { PlanEntity } from './plan.ts';
import { TenantEntity } from './tenant.ts';
import { TenantSessionEntity } from './tenant-session.ts';
import { TenantSigningKeyEntity } from './tenant-signing-key.ts';
import { ProjectEntity } from './project.ts';
import { ProjectOidcClientEntity } from './project-oidc-client.ts';
import { ProjectPublicationEntity } from './project-publication.ts';

export {
  PlanEntity,
  TenantEntity,
  TenantSessionEntity,
  TenantSigningKeyEntity,
  ProjectEntity,
  ProjectOidcClientEntity,
  ProjectPublicationEntity,
};
export type { Plan } from './plan.ts';
export type { Tenant } from './tenant.ts';
export type { TenantSession } from './tenant-session.ts';
export type { TenantSigningKey } from './tenant-signing-key.ts';
export type { Project } from './project.ts';
export type { ProjectOidcClient } from './project-oidc-client.ts';
export type { ProjectPublication } from './project-publication.ts';

export const tenantEntities = [
  PlanEntity,
  TenantEntity,
  TenantSessionEntity,
  TenantSigningKeyEntity,
  ProjectEntity,
  ProjectOidcClientEntity,
  ProjectPublicationEntity,
];
