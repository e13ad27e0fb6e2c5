// Naming of each project's own PostgreSQL schema and role.
import type { SubgraphDeps } from '../../../platform/subgraph.ts';

export type DataServices = { projectSchema: { schemaOf: (projectId: string) => string; apiUrl: () => string } };

/** Schema names are derived from the project id: `p_` + the uuid's hex digits (a valid identifier). */
export function schemaNameOf(projectId: string): string {
  return `p_${projectId.replace(/-/g, '').toLowerCase()}`;
}

export function createDataServices({ config }: SubgraphDeps): DataServices {
  return { projectSchema: { schemaOf: schemaNameOf, apiUrl: () => `${config.issuer}/v1` } };
}
