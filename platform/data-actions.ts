// The data API's actions, declared once: each one's GraphQL root field (subgraphs/data/schema.graphql), whether it
// writes, its arguments with their GraphQL types, and what it answers. The REST rows (rest-compat/routes/data.ts,
// `POST /api/v1/<action>`) and the functions' Database step (its operations in platform/internal-operations.ts) are
// generated from this table. The SDL stays written by hand for its descriptions; tests/unit/data-actions.test.ts
// checks that it has exactly these fields and arguments.

export type DataAction = {
  /** The root field of the data subgraph. */
  field: string;
  mutation: boolean;
  /** Arguments in order, each with its GraphQL type. */
  args: Readonly<Record<string, string>>;
  /** The fields of the answer. */
  selection: string;
};

const TABLE = { table: 'String!' };

export const DATA_ACTIONS = {
  find: {
    field: 'dataFind',
    mutation: false,
    args: { ...TABLE, select: '[String!]', where: 'JSON', orderBy: 'JSON', limit: 'Int', offset: 'Int' },
    selection: 'rows',
  },
  findOne: {
    field: 'dataFindOne',
    mutation: false,
    args: { ...TABLE, select: '[String!]', where: 'JSON', orderBy: 'JSON' },
    selection: 'row',
  },
  insert: {
    field: 'dataInsert',
    mutation: true,
    args: { ...TABLE, values: 'JSON!', returning: 'JSON' },
    selection: 'count rows',
  },
  update: {
    field: 'dataUpdate',
    mutation: true,
    args: { ...TABLE, where: 'JSON', set: 'JSON!', all: 'Boolean', returning: 'JSON' },
    selection: 'count rows',
  },
  delete: {
    field: 'dataDelete',
    mutation: true,
    args: { ...TABLE, where: 'JSON', all: 'Boolean', returning: 'JSON' },
    selection: 'count rows',
  },
  aggregate: {
    field: 'dataAggregate',
    mutation: false,
    selection: 'rows',
    args: {
      ...TABLE,
      aggregates: 'JSON!',
      groupBy: '[String!]',
      where: 'JSON',
      having: 'JSON',
      orderBy: 'JSON',
      limit: 'Int',
    },
  },
  vectorSearch: {
    field: 'dataVectorSearch',
    mutation: false,
    selection: 'rows method',
    args: {
      ...TABLE,
      column: 'String!',
      vector: '[Float!]!',
      k: 'Int',
      metric: 'String',
      where: 'JSON',
      select: '[String!]',
    },
  },
  rawSQL: {
    field: 'dataRawSql',
    mutation: true,
    args: { sql: 'String!', params: 'JSON' },
    selection: 'rows rowCount fields statements { index line command rowCount }',
  },
  transaction: { field: 'dataTransaction', mutation: true, args: { operations: 'JSON!' }, selection: 'results' },
} as const satisfies Record<string, DataAction>;

export type DataActionName = keyof typeof DATA_ACTIONS;

/**
 * The GraphQL document of an action: operation `name` taking every argument as a variable of the same name,
 * the root field under `alias` when given.
 */
export function dataActionDocument(action: DataAction, name: string, alias?: string): string {
  const names = Object.keys(action.args);
  const vars = names.map((n) => `$${n}: ${action.args[n]}`).join(', ');
  const args = names.map((n) => `${n}: $${n}`).join(', ');
  return `${action.mutation ? 'mutation' : 'query'} ${name}(${vars}) { ${alias ? `${alias}: ` : ''}${action.field}(${args}) { ${action.selection} } }`;
}
