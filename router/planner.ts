// Plans operations once with the query planner to find those a single subgraph can answer alone
// (DESIGN §4 "fast path"): one root fetch, no @requires, no rewrites, nothing the gateway adds.
import { parse } from 'graphql';
import { Supergraph, operationFromDocument } from '@apollo/federation-internals';
import { QueryPlanner, type PlanNode } from '@apollo/query-planner';

export type FastPath = { subgraph: string; query: string; operationName: string | undefined; variableUsages: string[] };

export type Planner = { fastPathOf: (query: string) => FastPath | null; subgraphsOf: (query: string) => string[] };

/** Builds the planner over the composed supergraph, once. */
export function createPlanner(supergraphSdl: string): Planner {
  const supergraph = Supergraph.build(supergraphSdl);
  const planner = new QueryPlanner(supergraph);
  const plan = (query: string) =>
    planner.buildQueryPlan(operationFromDocument(supergraph.schema, parse(query), { validate: true }));
  return {
    fastPathOf(query) {
      const node = plan(query).node;
      if (!node || node.kind !== 'Fetch') return null;
      if (
        node.requires?.length ||
        node.inputRewrites?.length ||
        node.outputRewrites?.length ||
        node.contextRewrites?.length
      )
        return null;
      // The planner adds __typename for abstract types; the gateway strips it, the fast path would not.
      if (node.operation.includes('__typename') && !query.includes('__typename')) return null;
      return {
        subgraph: node.serviceName,
        query: node.operation,
        operationName: node.operationName,
        variableUsages: node.variableUsages ?? [],
      };
    },
    subgraphsOf(query) {
      const names = new Set<string>();
      const walk = (n: PlanNode | undefined): void => {
        if (!n) return;
        if (n.kind === 'Fetch') names.add(n.serviceName);
        else if (n.kind === 'Sequence' || n.kind === 'Parallel') n.nodes.forEach(walk);
        else if (n.kind === 'Flatten') walk(n.node);
        else if (n.kind === 'Condition') {
          walk(n.ifClause);
          walk(n.elseClause);
        }
      };
      const root = plan(query).node;
      walk(root && root.kind !== 'Subscription' && root.kind !== 'Defer' ? root : undefined);
      return [...names];
    },
  };
}
