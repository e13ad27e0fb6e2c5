// OpenAPI 3.1 generated from the route table and the supergraph: request bodies from the operation's
// input types, responses from its selection set (with the REST aliases), errors from the error table.
import {
  Kind,
  parse,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  isScalarType,
  typeFromAST,
  type GraphQLSchema,
  type GraphQLInputType,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLObjectType,
  type GraphQLInterfaceType,
} from 'graphql';
import fs from 'node:fs';
import type { Config } from '../platform/config.ts';
import { ERROR_TABLE } from '../platform/errors.ts';
import type { RouteRow } from './route-types.ts';
import { snakeCase } from './variables.ts';

type Json = Record<string, unknown>;

/** The API's version is the package's (the client package carries the same; a test compares). */
export const API_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Every error status an answer of the platform can carry, described once under `components.responses`. */
const ERROR_STATUSES = [400, 401, 403, 404, 408, 409, 413, 415, 416, 422, 429, 500, 502, 503, 504] as const;

/** Statuses a domain's rows give beyond the ones every row can (see `errorStatusesOf`). */
const DOMAIN_STATUSES: Record<string, number[]> = {
  // unique violations, hooks refusing a write (their own status, e.g. 422), failing (502) or timing out, row limits
  'Data API': [409, 413, 422, 502, 504],
  Storage: [409, 413, 415, 416],
  // a function's `{"error", "status"}` answer chooses its status (422 and the like), a failing one is 502, a slow one 504
  'Edge functions': [409, 422, 502, 504],
};

/**
 * The error statuses a row can answer: bad input (400), unknown ids (404), the edge's time-out (408), the plan's
 * request quota (429), an internal error (500) and a service away (503) everywhere; 401 and 403 with credentials;
 * 413 and 415 for a body; 409 for changes; and what its domain adds.
 */
export function errorStatusesOf(row: RouteRow): number[] {
  const out = new Set<number>([400, 404, 408, 429, 500, 503]);
  if (row.auth !== 'none') [401, 403].forEach((s) => out.add(s));
  const hasBody = Object.values(row.variables).some((v) =>
    v.split('|').some((s) => s === 'body' || s === 'json' || s.startsWith('body.')),
  );
  if (hasBody) [413, 415].forEach((s) => out.add(s));
  if (row.operation.trimStart().startsWith('mutation')) out.add(409);
  for (const s of DOMAIN_STATUSES[row.tag] ?? []) out.add(s);
  return [...out].sort((a, b) => a - b);
}

const SCALARS: Record<string, Json> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

function nullable(s: Json): Json {
  return { anyOf: [s, { type: 'null' }] };
}

function inputSchema(t: GraphQLInputType, snake: boolean): Json {
  if (isNonNullType(t)) return inputSchema(t.ofType, snake);
  if (isListType(t)) return { type: 'array', items: inputSchema(t.ofType, snake) };
  if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
  if (isInputObjectType(t)) {
    const properties: Json = {};
    const required: string[] = [];
    for (const f of Object.values(t.getFields())) {
      const name = snake ? snakeCase(f.name) : f.name;
      properties[name] = { ...inputSchema(f.type, snake), ...(f.description ? { description: f.description } : {}) };
      if (isNonNullType(f.type) && f.defaultValue === undefined) required.push(name);
    }
    return {
      type: 'object',
      properties,
      additionalProperties: false,
      ...(required.length ? { required } : {}),
      ...(t.description ? { description: t.description } : {}),
    };
  }
  return SCALARS[t.name] ?? {};
}

function outputSchema(t: GraphQLOutputType, sel: SelectionSetNode | undefined, schema: GraphQLSchema): Json {
  if (isNonNullType(t)) return outputSchema(t.ofType, sel, schema);
  if (isListType(t)) {
    const item = outputSchema(t.ofType, sel, schema);
    return { type: 'array', items: isNonNullType(t.ofType) ? item : nullable(item) };
  }
  if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
  if (isScalarType(t)) return SCALARS[t.name] ?? {};
  if ((isObjectType(t) || isInterfaceType(t)) && sel) return selectionSchema(sel, t, schema);
  return {};
}

function selectionSchema(
  sel: SelectionSetNode,
  type: GraphQLObjectType | GraphQLInterfaceType,
  schema: GraphQLSchema,
): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const s of sel.selections) {
    if (s.kind !== Kind.FIELD) continue;
    const key = s.alias?.value ?? s.name.value;
    if (s.name.value === '__typename') {
      properties[key] = { type: 'string' };
      continue;
    }
    const field = type.getFields()[s.name.value];
    if (!field) continue;
    const fieldSchema = isNonNullType(field.type)
      ? outputSchema(field.type, s.selectionSet, schema)
      : nullable(outputSchema(field.type, s.selectionSet, schema));
    properties[key] = { ...fieldSchema, ...(field.description ? { description: field.description } : {}) };
    if (isNonNullType(field.type)) required.push(key);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

function opOf(row: RouteRow): OperationDefinitionNode {
  return parse(row.operation).definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
}

/** The OpenAPI document of every row of the table. */
export function buildOpenApi(rows: readonly RouteRow[], schema: GraphQLSchema, _config: Config): Json {
  const paths: Record<string, Json> = {};
  for (const row of rows) {
    const op = opOf(row);
    const varTypes = new Map(
      op.variableDefinitions?.map((v) => [
        v.variable.name.value,
        typeFromAST(schema, v.type as never) as GraphQLInputType | undefined,
      ]) ?? [],
    );
    const parameters: Json[] = [];
    let body: Json | undefined;
    const bodyProps: Json = {};
    const bodyRequired: string[] = [];
    for (const [name, sources] of Object.entries(row.variables)) {
      const t = varTypes.get(name);
      if (!t) continue;
      // `a|b` sources: document each place the value may come from.
      for (const source of sources.split('|')) {
        if (source === 'json') body = { description: 'Any JSON value' };
        else if (source === 'body') body = inputSchema(t, true);
        else if (source.startsWith('body.')) {
          bodyProps[source.slice(5)] = inputSchema(t, true);
          if (isNonNullType(t) && !sources.includes('|')) bodyRequired.push(source.slice(5));
        } else if (source.startsWith('header.')) {
          // Header names are case-insensitive; documented in their usual spelling (`Idempotency-Key`).
          const header = source
            .slice(7)
            .replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
          parameters.push({
            name: header,
            in: 'header',
            required: isNonNullType(t) && !sources.includes('|'),
            schema: inputSchema(t, true),
          });
        } else {
          const [where, key] = source.split('.') as ['params' | 'query', string];
          parameters.push({
            name: key,
            in: where === 'params' ? 'path' : 'query',
            required: where === 'params' || (isNonNullType(t) && !sources.includes('|')),
            schema: inputSchema(t, true),
          });
        }
      }
    }
    for (const m of row.path.matchAll(/:([A-Za-z_]+)/g)) {
      if (!parameters.some((p) => p.name === m[1] && p.in === 'path'))
        parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    if (!body && Object.keys(bodyProps).length > 0)
      body = { type: 'object', properties: bodyProps, ...(bodyRequired.length ? { required: bodyRequired } : {}) };

    const rootType = op.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
    const data = selectionSchema(op.selectionSet, rootType, schema);
    const firstKey = Object.keys(data.properties as Json)[0]!;
    const responseSchema =
      row.response === 'http'
        ? { description: "The function's own answer (any JSON)" }
        : row.unwrap
          ? (data.properties as Json)[firstKey]
          : data;

    const responses: Json = {
      [String(row.status)]:
        row.status === 204
          ? { description: 'Done, no content' }
          : { description: 'Success', content: { 'application/json': { schema: responseSchema } } },
    };
    for (const status of errorStatusesOf(row))
      responses[String(status)] = { $ref: `#/components/responses/E${status}` };

    const oaPath = row.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[oaPath] ??= {};
    paths[oaPath][row.method.toLowerCase()] = {
      operationId: row.id,
      summary: row.summary,
      ...(row.description ? { description: row.description } : {}),
      tags: [row.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
      responses,
      security:
        row.auth === 'none' ? [] : row.auth === 'tenant' ? [{ bearerAuth: [] }] : [{ apiKey: [] }, { bearerAuth: [] }],
      'x-graphql-operation': row.operation.trim(),
    };
  }

  const byStatus = new Map<number, string[]>();
  for (const [code, row] of Object.entries(ERROR_TABLE))
    byStatus.set(row.status, [...(byStatus.get(row.status) ?? []), code]);
  const errorResponses: Json = {};
  for (const status of ERROR_STATUSES) {
    errorResponses[`E${status}`] = {
      // 422 is also what functions and hooks typically choose for their own `{"error", "status"}` answers.
      description: `Error (${[...(byStatus.get(status) ?? []), ...(status === 422 || !byStatus.has(status) ? ['a function or hook answering this status'] : [])].join(', ')})`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera',
      version: API_VERSION,
      description:
        'Self-hostable backend platform. REST paths each run one GraphQL operation of the supergraph served at /graphql.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description:
            "A project key: the secret API key (tsk_...), or the publishable key (tpk_...) a web page or app may ship, which opens only a visitor's calls",
        },
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Tenant access token, or an end-user access token from /token',
        },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'request_id'],
              properties: {
                code: { type: 'string', enum: Object.keys(ERROR_TABLE) },
                message: { type: 'string' },
                details: { type: 'object' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
      responses: errorResponses,
    },
  };
}

type PathItems = Record<string, Record<string, Record<string, unknown>>>;

/**
 * The whole document: the route table's rows, then the hand-written handlers' path items (which describe their own
 * answers; each also gets the errors every route can give: 429, 500 and 503).
 */
export function assembleOpenApi(
  rows: readonly RouteRow[],
  schema: GraphQLSchema,
  config: Config,
  handlers: readonly PathItems[],
): Json {
  const openapi = buildOpenApi(rows, schema, config);
  const paths = openapi.paths as Record<string, Record<string, unknown>>;
  for (const items of handlers) {
    for (const [path, item] of Object.entries(items)) {
      for (const operation of Object.values(item)) {
        const responses = (operation.responses ??= {}) as Json;
        for (const status of ['429', '500', '503']) responses[status] ??= { $ref: `#/components/responses/E${status}` };
      }
      paths[path] = { ...paths[path], ...item };
    }
  }
  return openapi;
}
