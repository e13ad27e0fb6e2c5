// The identity subgraph's resolver map.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { IdentityContext } from './context.ts';
import { endUserMutations, endUserQueries } from './end-users.ts';
import { adminUserMutations, adminUserQueries } from './admin-users.ts';
import { internalMutations, internalQueries } from './internal.ts';
import { typeResolvers } from './types.ts';

export const identityResolvers = {
  Query: { ...endUserQueries, ...adminUserQueries, ...internalQueries },
  Mutation: { ...endUserMutations, ...adminUserMutations, ...internalMutations },
  ...typeResolvers,
} as unknown as GraphQLResolverMap<IdentityContext>;
