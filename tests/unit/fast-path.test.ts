import fs from 'node:fs';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createPlanner } from '../../router/planner.ts';
import { SUPERGRAPH_FILE } from '../../router/compose.ts';
import { ROUTE_TABLE } from '../../rest-compat/route-table.ts';
import { prepareRoutes } from '../../rest-compat/server.ts';
import { createRouter, type Router } from '../../router/router.ts';
import { createLogger } from '../../platform/logger.ts';
import type { SubgraphHandle } from '../../platform/subgraph.ts';

const supergraph = fs.readFileSync(SUPERGRAPH_FILE, 'utf8');
const planner = createPlanner(supergraph);

describe('the fast path (DESIGN §4)', () => {
  it('sends an operation one subgraph answers alone straight to that subgraph', () => {
    const fast = planner.fastPathOf('query($id: ID!) { project(id: $id) { id name api_key: apiKey } }');
    expect(fast).toMatchObject({ subgraph: 'tenant', variableUsages: ['id'] });
    expect(fast!.query).toContain('api_key:apiKey');
  });

  it('leaves an operation spanning subgraphs to the gateway', () => {
    expect(planner.fastPathOf('query($id: ID!) { project(id: $id) { name databaseSchema } }')).toBeNull();
    expect(planner.subgraphsOf('query($id: ID!) { project(id: $id) { name databaseSchema issuer } }').sort()).toEqual([
      'data',
      'identity',
      'tenant',
    ]);
  });

  it('plans every tenant row on the fast path', () => {
    for (const row of ROUTE_TABLE.filter((r) => r.tag === 'Tenant management')) {
      expect({ row: row.id, subgraph: planner.fastPathOf(row.operation)?.subgraph }).toEqual({
        row: row.id,
        subgraph: 'tenant',
      });
    }
  });
});

describe('start-up validation of the route table', () => {
  let router: Router;
  beforeAll(async () => {
    const handle = (name: string): SubgraphHandle => ({
      name,
      execute: async () => ({ errors: [{ message: 'not called in this test' }] }),
      health: async () => ({ status: 'ok', database: 'ok' }),
    });
    router = await createRouter({
      supergraphSdl: supergraph,
      handles: ['tenant', 'identity', 'data', 'storage', 'functions'].map(handle),
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await router.stop();
  });

  it('accepts the real table', () => {
    expect(prepareRoutes(router, ROUTE_TABLE)).toHaveLength(ROUTE_TABLE.length);
  });

  it('refuses to start when an operation does not match the supergraph, naming the row', () => {
    const bad = { ...ROUTE_TABLE[0]!, id: 'tenant.broken', operation: 'query { projectz { id } }' };
    expect(() => prepareRoutes(router, [...ROUTE_TABLE, bad])).toThrow(
      /tenant\.broken.*Cannot query field "projectz"/s,
    );
  });
});
