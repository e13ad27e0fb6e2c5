// Scalars the subgraphs share. JSON: any JSON value, in variables and in inline literals. Inline objects become
// plain objects with own properties only (Object.fromEntries): a `__proto__` key is data, never a prototype, and
// the values print like any object (graphql's valueFromASTUntyped makes null-prototype objects, which throw when
// turned into a string in an error message).
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';

/** The JavaScript value of a GraphQL literal, variables filled in. */
export function literalValue(node: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  switch (node.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
    case Kind.ENUM:
    case Kind.BOOLEAN:
      return node.value;
    case Kind.LIST:
      return node.values.map((v) => literalValue(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalValue(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[node.name.value];
  }
}

/** Any JSON value, passed through unchanged (keys keep their spelling: they may be column names). */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: (node, variables) => literalValue(node, variables),
});
