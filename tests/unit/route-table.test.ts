import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { parse, validate, Kind, type OperationDefinitionNode } from 'graphql';
import { ROUTE_TABLE } from '../../rest-compat/route-table.ts';
import { apiSchemaOf, SUPERGRAPH_FILE } from '../../router/compose.ts';
import { createPlanner } from '../../router/planner.ts';
import { SEED_ENDPOINTS } from './seed-rows.ts';

const supergraph = fs.readFileSync(SUPERGRAPH_FILE, 'utf8');
const api = apiSchemaOf(supergraph);
const planner = createPlanner(supergraph);

// The seed's endpoints with hand-written handlers (the identity provider's wire endpoints and mail links, the streamed
// upload and download, webhooks, health); every other row of the seed's tables is served through the route table.
const HAND_WRITTEN = new Set([
  'GET /.well-known/openid-configuration',
  'GET /jwks.json',
  'POST /token',
  'GET /userinfo',
  'POST /introspect',
  'POST /revocation',
  'POST /password/reset/confirm',
  'POST /email/verify/confirm',
  'POST /storage/api/v1/storage/upload',
  'GET /storage/api/v1/storage/download/:id',
  'POST /edge/webhooks/:project_id/:slug',
  'POST /webhooks/:project_id/:slug',
  'GET /health',
  'GET /health/auth/readyz',
  'GET /health/idp/readyz',
  'GET /health/core/readyz',
  'GET /health/storage/readyz',
]);
// The seed rows in the route table's path syntax (`:name` parameters).
const SEED_ROWS = SEED_ENDPOINTS.map((e) => e.replace(/\{(\w+)\}/g, ':$1')).filter((e) => !HAND_WRITTEN.has(e));

describe('the route table', () => {
  it('has a row for every seed endpoint without a hand-written handler', () => {
    const have = new Set(ROUTE_TABLE.map((r) => `${r.method} ${r.path}`));
    for (const row of SEED_ROWS) expect(have).toContain(row);
  });

  it('has unique operation ids and unique method+path pairs', () => {
    const ids = ROUTE_TABLE.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = ROUTE_TABLE.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  for (const row of ROUTE_TABLE) {
    describe(`${row.method} ${row.path}`, () => {
      const doc = parse(row.operation);
      const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;

      it('runs an operation that is valid against the supergraph', () => {
        expect(validate(api, doc).map((e) => e.message)).toEqual([]);
      });

      it('takes every variable from somewhere that exists, and declares every variable it maps', () => {
        const declared = new Set(op.variableDefinitions?.map((v) => v.variable.name.value));
        for (const [name, source] of Object.entries(row.variables)) {
          expect(declared).toContain(name);
          for (const one of source.split('|')) {
            if (one.startsWith('params.')) expect(row.path).toContain(`:${one.slice(7)}`);
            expect(one).toMatch(/^(body|body-deep|json|body\.\w+|params\.\w+|query\.\w+|header\.[a-z0-9-]+)$/);
          }
        }
        for (const v of op.variableDefinitions ?? []) {
          if (v.type.kind === Kind.NON_NULL_TYPE) expect(Object.keys(row.variables)).toContain(v.variable.name.value);
        }
      });

      it('has a dotted operation id, a summary and a sensible success status', () => {
        expect(row.id).toMatch(/^[a-z]+(\.[a-zA-Z-]+)+$/);
        expect(row.summary.length).toBeGreaterThan(3);
        expect([200, 201, 202, 204]).toContain(row.status);
        // The data API's reads are POSTs (their bodies are too rich for a query string) but stay GraphQL queries.
        const postedReads = ['data.find', 'data.findOne', 'data.aggregate', 'data.vectorSearch'];
        if (row.method === 'GET' || postedReads.includes(row.id)) expect(op.operation).toBe('query');
        else expect(op.operation).toBe('mutation');
      });

      it('can be planned by the query planner', () => {
        expect(() => planner.subgraphsOf(row.operation)).not.toThrow();
      });
    });
  }
});
