// The tenant subgraph's resolver map.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { accountMutations, accountQueries } from './accounts.ts';
import type { TenantContext } from './context.ts';
import { internalQueries } from './internal.ts';
import { projectMutations, projectQueries } from './projects.ts';
import { typeResolvers } from './types.ts';

export const tenantResolvers = {
  Query: { ...accountQueries, ...projectQueries, ...internalQueries },
  Mutation: { ...accountMutations, ...projectMutations },
  ...typeResolvers,
} as unknown as GraphQLResolverMap<TenantContext>;
