// Identity provider subgraph: OIDC / OAuth 2.0 for each project's end-users.
import { defineSubgraph } from '../../platform/subgraph.ts';
import { projectResolvers } from './resolvers/project.ts';
import { createIdentityServices, type IdentityServices } from './services/issuer.ts';

export const identitySubgraph = defineSubgraph<IdentityServices>({
  name: 'identity',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: [],
  createServices: createIdentityServices,
  resolvers: { ...projectResolvers },
});
