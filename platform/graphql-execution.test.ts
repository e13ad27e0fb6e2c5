import { describe, expect, it } from '@jest/globals';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { GraphQLError, parse, validate, type ExecutionResult } from 'graphql';
import { createExecutor, JIT_AFTER_RUNS, newCompilation } from './graphql-execution.ts';
import { JSONScalar } from './graphql-scalars.ts';

// A subgraph schema with what the platform's subgraphs use: input objects with nullable fields and defaults,
// lists, enums, the JSON scalar in variables and in literals, async resolvers, errors thrown by resolvers, a
// non-null field that resolves to null, an interface, and Federation's `_entities`.
const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  scalar JSON
  enum Color { RED GREEN }
  input GrantInput { grantType: String!, scope: String, tries: Int = 3, colors: [Color!] }
  interface Named { name: String! }
  type Person implements Named @key(fields: "id") { id: ID!, name: String!, friend: Person, strict: String! }
  type Robot implements Named { name: String!, model: Int }
  type Echo { grant: JSON, json: JSON, n: Int }
  type Query {
    echo(grant: GrantInput!, json: JSON, n: Int = 7): Echo!
    people(ids: [ID!]!): [Person]!
    named: [Named!]!
    fails(message: String!): String
    asyncFails: String!
  }
  type Mutation { bump(by: Int!): Int! }
`);
let counter = 0;
const people: Record<string, { id: string; name: string; friendId?: string }> = {
  p1: { id: 'p1', name: 'Ada', friendId: 'p2' },
  p2: { id: 'p2', name: 'Grace' },
};
const resolvers = {
  JSON: JSONScalar,
  Query: {
    echo: (_: unknown, args: { grant: unknown; json: unknown; n: number }) => ({
      grant: args.grant,
      json: args.json,
      n: args.n,
    }),
    people: async (_: unknown, args: { ids: string[] }) => args.ids.map((id) => people[id] ?? null),
    named: () => [
      { __typename: 'Person', ...people.p1 },
      { __typename: 'Robot', name: 'R2', model: 2 },
    ],
    fails: (_: unknown, args: { message: string }) => {
      throw new GraphQLError(args.message, { extensions: { code: 'NOT_FOUND' } });
    },
    asyncFails: async () => {
      throw new Error('database away');
    },
  },
  Mutation: { bump: (_: unknown, args: { by: number }) => (counter += args.by) },
  Named: { __resolveType: (v: { __typename: string }) => v.__typename },
  Person: {
    __resolveReference: (ref: { id: string }) => people[ref.id] ?? null,
    friend: (p: { friendId?: string }) => (p.friendId ? people[p.friendId] : null),
    strict: () => null,
  },
} as unknown as GraphQLResolverMap<unknown>;
const schema = buildSubgraphSchema([{ typeDefs, resolvers }]);

/** Every document with its variables: answers with data, with errors, and partial answers. */
const CASES: {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** false: a document graphql-jit would run wrongly, so never compiled. */
  compiles?: false;
}[] = [
  {
    name: 'input object, defaults, enums, JSON variable',
    query: 'query Q($g: GrantInput!, $j: JSON) { echo(grant: $g, json: $j) { grant json n } }',
    variables: { g: { grantType: 'client_credentials', colors: ['RED'] }, j: { a: [1, { b: null }], c: 'x' } },
  },
  {
    name: 'JSON literal holding a variable',
    query:
      'query Q($x: Int) { echo(grant: { grantType: "p", scope: null }, json: { a: $x, b: [true, "s"] }, n: 2) { grant json n } }',
    variables: { x: 5 },
    compiles: false,
  },
  { name: 'missing required variable', query: 'query Q($g: GrantInput!) { echo(grant: $g) { n } }', variables: {} },
  {
    name: 'input field of the wrong type',
    query: 'query Q($g: GrantInput!) { echo(grant: $g) { n } }',
    variables: { g: { grantType: 42 } },
  },
  {
    name: 'unknown input field',
    query: 'query Q($g: GrantInput!) { echo(grant: $g) { n } }',
    variables: { g: { grantType: 'x', granType: 'y' } },
  },
  {
    name: 'bad enum in a list',
    query: 'query Q($g: GrantInput!) { echo(grant: $g) { n } }',
    variables: { g: { grantType: 'x', colors: ['BLUE'] } },
  },
  {
    name: 'async list with a missing element and a nested resolver',
    query: '{ people(ids: ["p1", "nope"]) { id name friend { name friend { name } } } }',
  },
  { name: 'non-null field resolving to null', query: '{ people(ids: ["p1"]) { id strict } }' },
  { name: 'resolver error with a code', query: '{ a: fails(message: "gone") b: fails(message: "also") }' },
  { name: 'async resolver error on a non-null root field', query: '{ asyncFails }' },
  {
    name: 'interface and fragments',
    query: '{ named { __typename name ... on Robot { model } ... on Person { id } } }',
  },
  {
    name: 'entities',
    query: 'query E($r: [_Any!]!) { _entities(representations: $r) { ... on Person { id name } } }',
    variables: {
      r: [
        { __typename: 'Person', id: 'p2' },
        { __typename: 'Person', id: 'p9' },
      ],
    },
  },
  {
    name: 'named operation of several',
    query: 'query A { named { name } } query B { people(ids: ["p2"]) { name } }',
    operationName: 'B',
  },
];

/** A result as it leaves a subgraph (errors as JSON). */
const json = (r: ExecutionResult) =>
  JSON.parse(
    JSON.stringify({ data: r.data, errors: r.errors?.map((e) => ({ ...e.toJSON(), code: e.extensions?.code })) }),
  );

/** graphql-jit's date marker (public in its source): a string starting with it becomes code in a compiled document. */
const DATE_MARKER = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d';

describe('the subgraph executor', () => {
  it('answers every document the same interpreted (graphql-js) and compiled (graphql-jit)', async () => {
    const interpreted = createExecutor(schema, { jit: false });
    const compiled = createExecutor(schema, { jit: true });
    for (const c of CASES) {
      const doc = parse(c.query);
      expect(validate(schema, doc)).toEqual([]);
      const plain = newCompilation();
      const jit = newCompilation();
      const expected = json(await interpreted.run(doc, plain, c.operationName, c.variables ?? {}, {}));
      for (let run = 1; run <= JIT_AFTER_RUNS + 1; run++) {
        const got = json(await compiled.run(doc, jit, c.operationName, c.variables ?? {}, {}));
        expect({ case: c.name, run, result: got }).toEqual({ case: c.name, run, result: expected });
        expect(compiled.isCompiled(jit, c.operationName)).toBe(c.compiles !== false && run >= JIT_AFTER_RUNS);
      }
      expect(interpreted.isCompiled(plain, c.operationName)).toBe(false);
    }
  });

  it('runs mutations once per call, compiled or not', async () => {
    const executor = createExecutor(schema, { jit: true });
    const doc = parse('mutation M($by: Int!) { bump(by: $by) }');
    const compilation = newCompilation();
    counter = 0;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await executor.run(doc, compilation, undefined, { by: 2 }, {})).data);
    expect(answers).toEqual([{ bump: 2 }, { bump: 4 }, { bump: 6 }, { bump: 8 }]);
    expect(executor.isCompiled(compilation, undefined)).toBe(true);
  });

  it('compiles a document once per operation name, and keeps a bounded number of them', async () => {
    const executor = createExecutor(schema, { jit: true });
    const ops = Array.from({ length: 15 }, (_, i) => `query O${i} { named { name } }`).join('\n');
    const doc = parse(ops);
    const compilation = newCompilation();
    for (let i = 0; i < 15; i++) {
      for (let run = 0; run < JIT_AFTER_RUNS; run++) {
        expect((await executor.run(doc, compilation, `O${i}`, {}, {})).data).toEqual({
          named: [{ name: 'Ada' }, { name: 'R2' }],
        });
      }
    }
    expect(compilation.byOperation.size).toBe(10);
    // An operation past the bound still answers, interpreted (never compiled on every call).
    expect((await executor.run(doc, compilation, 'O14', {}, {})).data).toEqual({
      named: [{ name: 'Ada' }, { name: 'R2' }],
    });
    expect(executor.isCompiled(compilation, 'O14')).toBe(false);
  });

  it("never compiles a document holding one of graphql-jit's markers (it would run part of the string as code)", async () => {
    const executor = createExecutor(schema, { jit: true });
    const interpreted = createExecutor(schema, { jit: false });
    const global = globalThis as { pwned?: number };
    const attacks = [
      `{ fails(message: ${JSON.stringify(`${DATE_MARKER}0),a:(globalThis.pwned=42),b:(0`)}) }`,
      `{ fails(message: ${JSON.stringify(`x${DATE_MARKER}0),a:(globalThis.pwned=43),b:(0`)}) }`,
      // Escaped in the document: the parsed value holds the marker.
      `{ fails(message: "\\u005F_MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d0),a:(globalThis.pwned=44),b:(0") }`,
      `{ fails(message: """${DATE_MARKER}0),a:(globalThis.pwned=45),b:(0""") }`,
      `{ echo(grant: { grantType: "x" }, json: { ${DATE_MARKER}1: __MAGIC_NAN__ }) { json } }`,
      // A `__proto__` key written into the function's object literal would set a prototype instead of holding data.
      '{ echo(grant: { grantType: "x" }, json: { __proto__: { polluted: 1 }, kept: 2 }) { json } }',
      'query($g: JSON = { __proto__: { polluted: 1 } }) { echo(grant: { grantType: "x" }, json: $g) { json } }',
      '{ __proto__: named { name } n: named { name } }',
    ];
    for (const query of attacks) {
      const doc = parse(query);
      expect(validate(schema, doc)).toEqual([]);
      const compilation = newCompilation();
      const expected = json(await interpreted.run(doc, newCompilation(), undefined, {}, {}));
      for (let run = 0; run < JIT_AFTER_RUNS + 1; run++) {
        expect(json(await executor.run(doc, compilation, undefined, {}, {}))).toEqual(expected);
      }
      expect(executor.isCompiled(compilation, undefined)).toBe(false);
    }
    expect(global.pwned).toBeUndefined();
    // The same document without the marker is compiled.
    const plain = parse('{ fails(message: "0),a:(globalThis.pwned=46),b:(0") }');
    const compilation = newCompilation();
    for (let run = 0; run < JIT_AFTER_RUNS; run++) await executor.run(plain, compilation, undefined, {}, {});
    expect(executor.isCompiled(compilation, undefined)).toBe(true);
    expect(global.pwned).toBeUndefined();
  });
});
