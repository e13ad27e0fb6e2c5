import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import {
  Kind,
  getIntrospectionQuery,
  parse,
  validate,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { apiSchemaOf, SUPERGRAPH_FILE } from '../router/compose.ts';
import { ROUTE_TABLE } from '../rest-compat/route-table.ts';
import { CONFIG_SCHEMA, loadConfig } from './config.ts';
import {
  checkRows,
  graphqlLimitsOf,
  limitRules,
  operationRows,
  parseLimited,
  rowChecksOf,
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

/**
 * Counts reads of every selection set's `selections` in `doc`; past `perSet` reads per selection set (a budget linear
 * in the document) a read throws "work budget".
 */
function withCountedSelections(doc: DocumentNode, perSet: number): { count: number; reads: () => number } {
  let count = 0;
  let reads = 0;
  const nodes: SelectionSetNode[] = [];
  visit(doc, { SelectionSet: (node) => void nodes.push(node) });
  const budget = nodes.length * perSet;
  for (const node of nodes) {
    count++;
    const selections = node.selections;
    Object.defineProperty(node, 'selections', {
      get() {
        if (++reads > budget) throw new Error(`over the work budget of ${budget} reads`);
        return selections;
      },
    });
  }
  return { count, reads: () => reads };
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

  it('refuse a fragment bomb by its depth and cost without expanding it (work linear in the document)', () => {
    // The work is counted, not timed: every read of a selection set's selections is counted, and past a budget
    // linear in the document the read throws, so a rule that writes fragments out fails at once instead of hanging.
    const readsPerSet = (n: number) => {
      const doc = parseLimited(fragmentBomb(n), limits);
      const sets = withCountedSelections(doc, 20);
      const errs = validate(schema, doc, limitRules(limits));
      return { errs, perSet: sets.reads() / sets.count };
    };
    const small = readsPerSet(5);
    const { errs, perSet } = readsPerSet(40); // 2^40 fields once written out
    expect(perSet).toBeLessThanOrEqual(small.perSet);
    expect(limitOf(errs)).toEqual(expect.arrayContaining(['depth', 'cost']));
    for (const e of errs) expect(e.extensions).toMatchObject({ code: 'GRAPHQL_LIMIT_EXCEEDED', http: { status: 400 } });
    // The cost found is reported whole, not cut at an exponent's dot ("found 3.3e+25" once read as 3).
    const cost = errs.find((e) => limitOf([e])[0] === 'cost')!;
    expect((cost.extensions!.details as { found: number }).found).toBeGreaterThan(1e12);
  });

  it('a rule that writes fragments out would fail the work count (the count can fail)', () => {
    const doc = parseLimited(fragmentBomb(40), limits);
    withCountedSelections(doc, 20);
    const expand = (set: SelectionSetNode): number =>
      set.selections.reduce(
        (n, s) =>
          n +
          (s.kind === Kind.FRAGMENT_SPREAD
            ? expand(
                doc.definitions.find(
                  (d): d is FragmentDefinitionNode =>
                    d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value,
                )!.selectionSet,
              )
            : 1),
        0,
      );
    const op = doc.definitions[0] as OperationDefinitionNode;
    expect(() => expand(op.selectionSet)).toThrow(/work budget/);
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

  it('prepare the row check once per document, counting again only when a variable sets a page size', () => {
    const tight: GraphQLLimits = { ...limits, maxRows: 500 };
    const fixed = rowChecksOf(
      schema,
      parse('query A { dataFind(table: "t", limit: 600) { rows } } query B { __typename }'),
      tight,
    );
    expect(fixed('A', {})?.extensions).toMatchObject({ details: { limit: 'rows', found: 600 } });
    expect(fixed('A', { anything: 1 })?.extensions).toMatchObject({ details: { found: 600 } });
    expect(fixed('B', {})).toBeUndefined();
    // The page size comes from the variables: each call counts with its own.
    const byVariable = rowChecksOf(schema, parse('query($l: Int) { dataFind(table: "t", limit: $l) { rows } }'), tight);
    expect(byVariable(undefined, { l: 10 })).toBeUndefined();
    expect(byVariable(undefined, { l: 900 })?.extensions).toMatchObject({ details: { found: 900 } });
    expect(byVariable(undefined, {})).toBeUndefined(); // the default page (100)
  });
});
