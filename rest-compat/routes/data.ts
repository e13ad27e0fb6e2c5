// REST rows of the data API (`POST /v1/<action>`, served as `/api/v1/<action>`; the front door rewrites
// /v1/* to /api/v1/*) and the project's realtime publications. Body fields pass through one by one
// (`body.<field>`), so column names inside `where`, `values` or `set` are never renamed.
import type { RouteRow } from '../route-types.ts';

const TAG = 'Data API';
const WHERE = 'A `where` is an object: a plain value means equality; operators eq ne gt gte lt lte in nin like ilike isNull contains; and, or, not combine.';
const PUBLICATION = 'table enabled updated_at: updatedAt';

function row(id: string, action: string, summary: string, description: string, status: number, operation: string, fields: string[]): RouteRow {
  return {
    id: `data.${id}`,
    method: 'POST',
    path: `/api/v1/${action}`,
    summary,
    description,
    tag: TAG,
    auth: 'project',
    operation,
    status,
    variables: Object.fromEntries(fields.map((f) => [f, `body.${f}` as const])),
    unwrap: true,
  };
}

export const dataRoutes: RouteRow[] = [
  row('find', 'find', 'Select rows', `Body \`{table, select?, where?, orderBy?, limit?, offset?}\` → \`{rows}\`. limit 1-1000, default 100. ${WHERE}`, 200,
    `query DataFind($table: String!, $select: [String!], $where: JSON, $orderBy: JSON, $limit: Int, $offset: Int) {
      dataFind(table: $table, select: $select, where: $where, orderBy: $orderBy, limit: $limit, offset: $offset) { rows }
    }`, ['table', 'select', 'where', 'orderBy', 'limit', 'offset']),
  row('findOne', 'findOne', 'The first matching row', 'Body `{table, select?, where?, orderBy?}` → `{row}` (null when nothing matches).', 200,
    `query DataFindOne($table: String!, $select: [String!], $where: JSON, $orderBy: JSON) {
      dataFindOne(table: $table, select: $select, where: $where, orderBy: $orderBy) { row }
    }`, ['table', 'select', 'where', 'orderBy']),
  row('insert', 'insert', 'Insert rows', 'Body `{table, values, returning?}`: `values` is a row object or an array of up to 1000. 201 `{count, rows}`; 409 on a unique violation.', 201,
    `mutation DataInsert($table: String!, $values: JSON!, $returning: JSON) { dataInsert(table: $table, values: $values, returning: $returning) { count rows } }`,
    ['table', 'values', 'returning']),
  row('update', 'update', 'Update matching rows', 'Body `{table, where, set, returning?, all?}` → `{count, rows}`. Without a where: 400 unless `all: true`.', 200,
    `mutation DataUpdate($table: String!, $where: JSON, $set: JSON!, $all: Boolean, $returning: JSON) {
      dataUpdate(table: $table, where: $where, set: $set, all: $all, returning: $returning) { count rows }
    }`, ['table', 'where', 'set', 'all', 'returning']),
  row('delete', 'delete', 'Delete matching rows', 'Body `{table, where, returning?, all?}` → `{count, rows}`. Without a where: 400 unless `all: true`.', 200,
    `mutation DataDelete($table: String!, $where: JSON, $all: Boolean, $returning: JSON) {
      dataDelete(table: $table, where: $where, all: $all, returning: $returning) { count rows }
    }`, ['table', 'where', 'all', 'returning']),
  row('aggregate', 'aggregate', 'COUNT, SUM, AVG, MIN, MAX with GROUP BY', 'Body `{table, aggregates: [{fn, column?, as?}], groupBy?, where?, having?, orderBy?, limit?}` → `{rows}`.', 200,
    `query DataAggregate($table: String!, $aggregates: JSON!, $groupBy: [String!], $where: JSON, $having: JSON, $orderBy: JSON, $limit: Int) {
      dataAggregate(table: $table, aggregates: $aggregates, groupBy: $groupBy, where: $where, having: $having, orderBy: $orderBy, limit: $limit) { rows }
    }`, ['table', 'aggregates', 'groupBy', 'where', 'having', 'orderBy', 'limit']),
  row('transaction', 'transaction', 'Several actions atomically', 'Body `{operations: [{action, table, ...}]}` → `{results}`. All or nothing; an error names the failing operation (`details.operation`).', 200,
    `mutation DataTransaction($operations: JSON!) { dataTransaction(operations: $operations) { results } }`, ['operations']),
  row('vectorSearch', 'vectorSearch', 'Nearest neighbours of a vector', 'Body `{table, column, vector, k?, metric?, where?, select?}` → `{rows (with _distance), method: "hnsw" | "exact"}`.', 200,
    `query DataVectorSearch($table: String!, $column: String!, $vector: [Float!]!, $k: Int, $metric: String, $where: JSON, $select: [String!]) {
      dataVectorSearch(table: $table, column: $column, vector: $vector, k: $k, metric: $metric, where: $where, select: $select) { rows method }
    }`, ['table', 'column', 'vector', 'k', 'metric', 'where', 'select']),
  row('rawSQL', 'rawSQL', 'Parameterized SQL', 'Body `{sql, params?}` → `{rows, rowCount, fields}`. One statement on the project\'s own schema, as its own role; project API key only.', 200,
    `mutation DataRawSql($sql: String!, $params: JSON) { dataRawSql(sql: $sql, params: $params) { rows rowCount fields } }`, ['sql', 'params']),
  {
    id: 'data.publication.list',
    method: 'GET',
    path: '/api/v1/publication',
    summary: 'Realtime publications of the project',
    description: 'The same switches as `/auth/api/v1/projects/:id/publications`, for the project API key.',
    tag: TAG,
    auth: 'project',
    operation: `query DataPublicationList { publications: projectPublications { ${PUBLICATION} } }`,
    status: 200,
    variables: {},
  },
  {
    id: 'data.publication.set',
    method: 'POST',
    path: '/api/v1/publication',
    summary: 'Toggle realtime for a table',
    description: 'Body `{table, enabled}`. Changes of an enabled table stream to subscribers of `/realtime`.',
    tag: TAG,
    auth: 'project',
    operation: `mutation DataPublicationSet($input: SetPublicationInput!) { publication: setProjectPublication(input: $input) { ${PUBLICATION} } }`,
    status: 200,
    variables: { input: 'body' },
  },
];
