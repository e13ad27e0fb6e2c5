// The functions subgraph's resolver map.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { FunctionsContext } from './context.ts';
import { emailMutations, emailQueries } from './email.ts';
import { eventMutations, eventQueries } from './events.ts';
import { executionMutations, executionQueries } from './executions.ts';
import { functionMutations, functionQueries } from './functions.ts';
import { hookMutations, hookQueries } from './hooks.ts';
import { JSONScalar } from '../../../platform/graphql-scalars.ts';
import { triggerMutations, triggerQueries } from './triggers.ts';
import { typeResolvers } from './types.ts';

export const functionsResolvers = {
  JSON: JSONScalar,
  Query: {
    ...functionQueries,
    ...triggerQueries,
    ...hookQueries,
    ...emailQueries,
    ...executionQueries,
    ...eventQueries,
  },
  Mutation: {
    ...functionMutations,
    ...triggerMutations,
    ...hookMutations,
    ...emailMutations,
    ...executionMutations,
    ...eventMutations,
  },
  ...typeResolvers,
} as unknown as GraphQLResolverMap<FunctionsContext>;
