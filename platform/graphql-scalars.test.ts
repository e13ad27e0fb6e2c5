import { describe, expect, it } from '@jest/globals';
import { buildSchema, graphql } from 'graphql';
import { JSONScalar } from './graphql-scalars.ts';

const schema = buildSchema('scalar JSON\ntype Query { echo(value: JSON): JSON }');
Object.assign(schema.getType('JSON')!, {
  parseLiteral: JSONScalar.parseLiteral,
  parseValue: JSONScalar.parseValue,
  serialize: JSONScalar.serialize,
});
const rootValue = {
  echo: ({ value }: { value: unknown }) => ({
    value,
    proto:
      value && typeof value === 'object'
        ? Object.getPrototypeOf(value) === Object.prototype || Array.isArray(value)
        : null,
    text: String(value),
  }),
};

async function echo(source: string, variableValues?: Record<string, unknown>) {
  const res = await graphql({ schema, source, rootValue, variableValues });
  expect(res.errors).toBeUndefined();
  return (res.data as { echo: { value: unknown; proto: boolean | null; text: string } }).echo;
}

describe('the JSON scalar', () => {
  it('passes variables through unchanged', async () => {
    const value = { a: [1, 2.5, 'x', null, true, { 'Mixed Case': 'kept' }] };
    expect((await echo('query ($v: JSON) { echo(value: $v) }', { v: value })).value).toEqual(value);
  });

  it('reads inline literals of every kind, variables inside them filled in', async () => {
    const out = await echo(
      'query ($n: JSON) { echo(value: {int: 3, float: -1.5e3, s: "x", b: false, nul: null, e: ENUMISH, list: [1, [2]], nested: {v: $n}}) }',
      { n: { deep: 1 } },
    );
    expect(out.value).toEqual({
      int: 3,
      float: -1500,
      s: 'x',
      b: false,
      nul: null,
      e: 'ENUMISH',
      list: [1, [2]],
      nested: { v: { deep: 1 } },
    });
  });

  it('makes plain objects: printable, and a __proto__ key is data, not a prototype', async () => {
    const out = await echo('{ echo(value: {__proto__: {polluted: true}, constructor: 1}) }');
    expect(out.proto).toBe(true);
    expect(out.text).toBe('[object Object]');
    expect(Object.keys(out.value as object)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('gives an unset variable inside a literal as undefined, a top-level null as null', async () => {
    expect((await echo('query ($v: JSON) { echo(value: [$v]) }')).value).toStrictEqual([undefined]);
    expect((await echo('{ echo(value: null) }')).value).toBeNull();
  });
});
