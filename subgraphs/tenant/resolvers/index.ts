// The tenant subgraph's resolver map.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { accountMutations, accountQueries } from './accounts.ts';
import type { TenantContext } from './context.ts';
import { internalQueries } from './internal.ts';
import { projectMutations, projectQueries } from './projects.ts';
import { typeResolvers } from './types.ts';
import { operatorMutations, operatorProjectFields, operatorQueries, operatorTypes } from './operator.ts';

export const tenantResolvers = {
  Query: { ...accountQueries, ...projectQueries, ...internalQueries, ...operatorQueries },
  Mutation: { ...accountMutations, ...projectMutations, ...operatorMutations },
  ...typeResolvers,
  ...operatorTypes,
  Project: { ...typeResolvers.Project, ...operatorProjectFields },
} as unknown as GraphQLResolverMap<TenantContext>;
