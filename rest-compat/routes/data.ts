// REST rows of the data API (`POST /v1/<action>`, its one documented path; the front door rewrites the old
// /api/v1/* spelling to /v1/*) and the project's realtime publications. The actions' rows are generated from the table of
// data actions (platform/data-actions.ts): body fields pass through one by one as the action's arguments
// (`body.<field>`), so column names inside `where`, `values` or `set` are never renamed.
import { DATA_ACTIONS, dataActionDocument, type DataActionName } from '../../platform/data-actions.ts';
import type { RouteRow } from '../route-types.ts';

const TAG = 'Data API';
const WHERE =
  'A `where` is an object: a plain value means equality; operators eq ne gt gte lt lte in nin like ilike isNull contains; and, or, not combine.';
const PUBLICATION = 'table enabled updated_at: updatedAt';

/** The REST row of a data action: its body's fields are the action's arguments (platform/data-actions.ts). */
function row(action: DataActionName, summary: string, description: string, status = 200): RouteRow {
  const a = DATA_ACTIONS[action];
  const opName = `Data${a.field.slice('data'.length)}`;
  return {
    id: `data.${action}`,
    method: 'POST',
    path: `/v1/${action}`,
    summary,
    description,
    tag: TAG,
    auth: 'project',
    operation: dataActionDocument(a, opName),
    status,
    variables: Object.fromEntries(Object.keys(a.args).map((f) => [f, `body.${f}` as const])),
    unwrap: true,
  };
}

export const dataRoutes: RouteRow[] = [
  row(
    'find',
    'Select rows',
    `Body \`{table, select?, where?, orderBy?, limit?, offset?}\` → \`{rows}\`. limit 1-1000, default 100. ${WHERE}`,
  ),
  row(
    'findOne',
    'The first matching row',
    'Body `{table, select?, where?, orderBy?}` → `{row}` (null when nothing matches).',
  ),
  row(
    'insert',
    'Insert rows',
    'Body `{table, values, returning?}`: `values` is a row object or an array of up to 1000. 201 `{count, rows}`; 409 on a unique violation.',
    201,
  ),
  row(
    'update',
    'Update matching rows',
    'Body `{table, where, set, returning?, all?}` → `{count, rows}`. Without a where: 400 unless `all: true`.',
  ),
  row(
    'delete',
    'Delete matching rows',
    'Body `{table, where, returning?, all?}` → `{count, rows}`. Without a where: 400 unless `all: true`.',
  ),
  row(
    'aggregate',
    'COUNT, SUM, AVG, MIN, MAX with GROUP BY',
    'Body `{table, aggregates: [{fn, column?, as?}], groupBy?, where?, having?, orderBy?, limit?}` → `{rows}`.',
  ),
  row(
    'transaction',
    'Several actions atomically',
    'Body `{operations: [{action, table, ...}]}` → `{results}`. All or nothing; an error names the failing operation (`details.operation`).',
  ),
  row(
    'vectorSearch',
    'Nearest neighbours of a vector',
    'Body `{table, column, vector, k?, metric?, where?, select?}` → `{rows (with _distance), method: "hnsw" | "exact"}`.',
  ),
  row(
    'rawSQL',
    'Parameterized SQL',
    "Body `{sql, params?}` → `{rows, rowCount, fields, statements: [{index, line, command, rowCount}]}`. One statement with `$1` placeholders, or a script of several statements (no params) run as one transaction: all or nothing; a failing statement is named in the error (`statement N (line L)`, `details.statement`, `details.position`) and nothing of the script is kept. Each statement is checked alone: the project's own schema, as its own role. Project API key only (or a client token with admin:sql).",
  ),
  {
    id: 'data.publication.list',
    method: 'GET',
    path: '/v1/publication',
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
    path: '/v1/publication',
    summary: 'Toggle realtime for a table',
    description: 'Body `{table, enabled}`. Changes of an enabled table stream to subscribers of `/realtime`.',
    tag: TAG,
    auth: 'project',
    operation: `mutation DataPublicationSet($input: SetPublicationInput!) { publication: setProjectPublication(input: $input) { ${PUBLICATION} } }`,
    status: 200,
    variables: { input: 'body' },
  },
  // The project's schema and its migrations (subgraphs/data/services/migrations.ts).
  {
    id: 'data.schema.get',
    method: 'GET',
    path: '/v1/schema',
    summary: "The project's schema",
    description:
      "`{tables: [{name, rlsEnabled, rowEstimate, columns: [{name, type, nullable, default, primaryKey}], primaryKey, foreignKeys, indexes, triggers, policies: [{name, command, roles, permissive, using, withCheck}]}], views, functions, enums, sequences, grants}`, read by the platform on the project's behalf and limited to the project's own schema. `?format=sql` answers the schema as a runnable SQL script instead (`text/plain`; what `tessera db dump --schema` writes). Secret key, or a client token with admin:sql.",
    tag: TAG,
    auth: 'project',
    operation: 'query DataSchemaGet($format: String) { schema: dataSchemaDocument(format: $format) }',
    status: 200,
    textSuccess: 'with `?format=sql`: the schema as a runnable SQL script',
    variables: { format: 'query.format' },
    unwrap: true,
  },
  {
    id: 'data.migrations.list',
    method: 'GET',
    path: '/v1/migrations',
    summary: 'Applied migrations',
    description:
      'The migrations applied to the project (`tessera_migrations` in its own schema), oldest first: `{migrations: [{version, name, checksum, appliedAt}]}`. Secret key, or a client token with admin:sql.',
    tag: TAG,
    auth: 'project',
    operation: 'query DataMigrationList { migrations: dataMigrations { version name checksum appliedAt } }',
    status: 200,
    variables: {},
  },
  {
    id: 'data.usage.get',
    method: 'GET',
    path: '/v1/usage',
    summary: "The project's database size against its plan",
    description:
      "`{usage: {rows, bytes, max_rows, max_bytes, measured_at}}`: the live rows of the project's tables (PostgreSQL's statistics, about a second behind) and the size of its database in bytes, measured now, with the plan's `max_database_rows` and `max_database_bytes` (null: no limit). Past either, writes are answered 413 `QUOTA_EXCEEDED`; reads and deletes keep working. Secret key only.",
    tag: TAG,
    auth: 'project',
    operation:
      'query DataUsageGet { usage: dataUsage { rows bytes max_rows: maxRows max_bytes: maxBytes measured_at: measuredAt } }',
    status: 200,
    variables: {},
  },
  {
    id: 'data.migrations.apply',
    method: 'POST',
    path: '/v1/migrations',
    summary: 'Apply a migration',
    description:
      "Body `{version, name, sql, recordOnly?}` → `{applied, migration: {version, name, checksum, appliedAt}}`. The SQL runs as a rawSQL script (the project's role, each statement through the SQL guard, one transaction) and is recorded in the same transaction; a failing migration leaves nothing of itself (the error names the statement). The same version again: `applied: false` when the checksum (sha256 of `sql`) matches, 409 naming the migration when it does not. `recordOnly: true` records without running (a pulled schema). Secret key, or a client token with admin:sql.",
    tag: TAG,
    auth: 'project',
    operation:
      'mutation DataMigrationApply($version: String!, $name: String!, $sql: String!, $recordOnly: Boolean) { result: dataApplyMigration(version: $version, name: $name, sql: $sql, recordOnly: $recordOnly) { applied migration { version name checksum appliedAt } } }',
    status: 200,
    variables: {
      version: 'body.version',
      name: 'body.name',
      sql: 'body.sql',
      recordOnly: 'body.recordOnly',
    },
    unwrap: true,
  },
];
