// Data API subgraph: queries, aggregates, transactions, vector search and SQL over each project's schema.
import { defineSubgraph } from '../../platform/subgraph.ts';
import { projectResolvers } from './resolvers/project.ts';
import { createDataServices, type DataServices } from './services/project-schema.ts';

export const dataSubgraph = defineSubgraph<DataServices>({
  name: 'data',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: [],
  createServices: createDataServices,
  resolvers: { ...projectResolvers },
});
