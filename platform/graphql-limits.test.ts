import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { getIntrospectionQuery, parse, validate, type GraphQLError } from 'graphql';
import { apiSchemaOf, SUPERGRAPH_FILE } from '../router/compose.ts';
import { ROUTE_TABLE } from '../rest-compat/route-table.ts';
import { CONFIG_SCHEMA, loadConfig } from './config.ts';
import {
  checkRows,
  graphqlLimitsOf,
  limitRules,
  operationRows,
  parseLimited,
  type GraphQLLimits,
} from './graphql-limits.ts';

const schema = apiSchemaOf(fs.readFileSync(SUPERGRAPH_FILE, 'utf8'));
const limits: GraphQLLimits = graphqlLimitsOf(loadConfig({}));
const check = (query: string, l = limits): readonly GraphQLError[] =>
  validate(schema, parseLimited(query, l), limitRules(l));
const limitOf = (errs: readonly GraphQLError[]) =>
  errs.map((e) => (e.extensions?.details as { limit?: string } | undefined)?.limit);

/** `fragment Fn on Query { ...Fn-1 ...Fn-1 }`: expands to 2^n fields when written out. */
function fragmentBomb(n: number): string {
  const frags = ['fragment F0 on Query { __typename }'];
  for (let i = 1; i <= n; i++) frags.push(`fragment F${i} on Query { ...F${i - 1} a${i}: __typename ...F${i - 1} }`);
  return `query { ...F${n} }\n${frags.join('\n')}`;
}

describe('GraphQL limits', () => {
  it('let every documented operation (route table) and the introspection query through', () => {
    for (const row of ROUTE_TABLE)
      expect({ id: row.id, errors: check(row.operation).map((e) => e.message) }).toEqual({ id: row.id, errors: [] });
    expect(check(getIntrospectionQuery())).toEqual([]);
  });

  it('have documented defaults in the config schema', () => {
    expect(limits).toEqual({
      maxDepth: Number(CONFIG_SCHEMA.graphqlMaxDepth.default),
      maxAliases: Number(CONFIG_SCHEMA.graphqlMaxAliases.default),
      maxDirectives: Number(CONFIG_SCHEMA.graphqlMaxDirectives.default),
      maxTokens: Number(CONFIG_SCHEMA.graphqlMaxTokens.default),
      maxCost: Number(CONFIG_SCHEMA.graphqlMaxCost.default),
      maxRows: Number(CONFIG_SCHEMA.graphqlMaxRows.default),
    });
  });

  it('refuse a fragment bomb by its depth and cost without expanding it (well under 50 ms)', () => {
    const started = performance.now();
    const errs = check(fragmentBomb(40));
    expect(performance.now() - started).toBeLessThan(50);
    expect(limitOf(errs)).toEqual(expect.arrayContaining(['depth', 'cost']));
    for (const e of errs) expect(e.extensions).toMatchObject({ code: 'GRAPHQL_LIMIT_EXCEEDED', http: { status: 400 } });
  });

  it('refuse too many aliases and directives, naming the limit and its setting', () => {
    // (aliases of __typename are free: GraphQL clients add them)
    const aliases = check(
      `{ ${Array.from({ length: 300 }, (_, i) => `a${i}: dataFind(table: "t") { rows }`).join(' ')} }`,
    );
    expect(limitOf(aliases)).toContain('aliases');
    expect(aliases[0]!.message).toMatch(/TESSERA_GRAPHQL_MAX_ALIASES/);
    expect(limitOf(check(`{ __typename ${'@include(if: true) '.repeat(60)}}`))).toContain('directives');
  });

  it('stop parsing past the token cap', () => {
    expect(() => parseLimited(`{ ${'__typename '.repeat(6000)}}`, limits)).toThrow(/tokens limit/);
  });

  it('refuse NUL in string literals', () => {
    expect(check('{ dataFind(table: "t\\u0000") { rows } }')[0]!.message).toMatch(/NUL/);
  });

  it('count the rows of data actions over every alias, with variables and fragments', () => {
    const doc = parse(`query($l: Int) { a: dataFind(table: "t", limit: $l) { rows } ...F ...F }
      fragment F on Query { b: dataFind(table: "t") { rows } c: dataVectorSearch(table: "t", column: "v", vector: [1], k: 5) { rows } }`);
    expect(operationRows(schema, doc, undefined, { l: 1000 })).toBe(1000 + 2 * (100 + 5));
    const many = parse(
      `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: dataFind(table: "t", limit: 1000) { rows }`).join(' ')} }`,
    );
    expect(checkRows(schema, many, undefined, {}, limits)?.extensions).toMatchObject({
      code: 'GRAPHQL_LIMIT_EXCEEDED',
      details: { limit: 'rows', found: 20_000 },
    });
    expect(checkRows(schema, parse('{ __typename }'), undefined, {}, limits)).toBeUndefined();
  });
});
