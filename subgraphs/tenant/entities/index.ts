// Every entity of the tenant subgraph, in the order the ORM should discover them.
import { PlanEntity } from './plan.ts';
import { TenantEntity } from './tenant.ts';
import { TenantSessionEntity } from './tenant-session.ts';
import { TenantSigningKeyEntity } from './tenant-signing-key.ts';
import { ProjectEntity } from './project.ts';
import { ProjectOidcClientEntity } from './project-oidc-client.ts';
import { ProjectPublicationEntity } from './project-publication.ts';

export * from './plan.ts';
export * from './tenant.ts';
export * from './tenant-session.ts';
export * from './tenant-signing-key.ts';
export * from './project.ts';
export * from './project-oidc-client.ts';
export * from './project-publication.ts';

export const tenantEntities = [
  PlanEntity,
  TenantEntity,
  TenantSessionEntity,
  TenantSigningKeyEntity,
  ProjectEntity,
  ProjectOidcClientEntity,
  ProjectPublicationEntity,
];
