// Builds an operation's variables from a REST request as its route row says.
import { Kind, parse, type OperationDefinitionNode, type TypeNode } from 'graphql';
import type { RouteRow } from './route-types.ts';
import { AppError, errors } from '../platform/errors.ts';

export type RestRequest = {
  body: unknown;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers?: Record<string, string | string[] | undefined>;
};

/** `totp_code` → `totpCode`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `totpCode` → `totp_code` (to name fields in error messages the way the caller sent them). */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `body-deep`: every key of nested objects (and of objects in arrays) camelCased too. */
function camelCaseDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelCase(k), camelCaseDeep(v)]));
}

function namedType(t: TypeNode): string {
  return t.kind === Kind.NAMED_TYPE ? t.name.value : namedType(t.type);
}

/** The variable definitions of a row's operation: name → GraphQL type name (for coercing strings). */
export function variableTypesOf(row: RouteRow): Map<string, string> {
  const op = parse(row.operation).definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  return new Map((op?.variableDefinitions ?? []).map((v) => [v.variable.name.value, namedType(v.type)]));
}

function coerce(value: unknown, type: string | undefined, name: string): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'Int' || type === 'Float') {
    if (value.trim() === '' || Number.isNaN(Number(value)))
      throw errors.validation(name, `expected a number, got "${value}"`);
    return Number(value);
  }
  if (type === 'Boolean') {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw errors.validation(name, `expected true or false, got "${value}"`);
  }
  return value;
}

/**
 * The body fields a row reads one by one (`body.<field>` sources), or undefined when it takes the whole body (then the
 * operation's input type decides, and its refusals are renamed by restVariableError).
 */
export function bodyFieldsOf(row: RouteRow): string[] | undefined {
  const sources = Object.values(row.variables).flatMap((s) => s.split('|'));
  if (sources.some((s) => s === 'body' || s === 'body-deep' || s === 'json')) return undefined;
  return sources.filter((s) => s.startsWith('body.')).map((s) => s.slice(5));
}

/** A field of the body the row does not read: a 400 naming it and the ones it reads (a typo must never widen a call). */
function checkBodyFields(row: RouteRow, body: Record<string, unknown> | undefined): void {
  if (!body) return;
  const allowed = bodyFieldsOf(row);
  if (!allowed) return;
  for (const key of Object.keys(body)) {
    if (allowed.includes(key)) continue;
    const close = allowed.find((a) => a.toLowerCase() === key.toLowerCase() || camelCase(key) === a);
    throw new AppError(
      'BAD_USER_INPUT',
      allowed.length === 0
        ? `${key}: this request takes no body fields`
        : `${key}: unknown field${close ? ` (did you mean ${close}?)` : ''}; ${row.method} ${row.path} takes ${allowed.join(', ')}`,
      { field: key, allowed },
    );
  }
}

/** Maps the request onto the row's variables; values missing from the request are left out. */
export function variablesFor(row: RouteRow, req: RestRequest, types: Map<string, string>): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  const body = req.body;
  const bodyObject =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  // A text body (text/plain is parsed as a string) where the row reads JSON: say what to send.
  if (typeof body === 'string' && Object.values(row.variables).some((s) => s.includes('body') || s === 'json'))
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Unsupported content type text/plain: send the body as JSON (Content-Type: application/json)',
      { expected: 'application/json' },
    );
  const valueOf = (name: string, source: string): unknown => {
    let value: unknown;
    if (source.includes('|')) {
      const [first, second] = source.split('|') as [string, string];
      value = valueOf(name, first);
      return value !== undefined ? value : valueOf(name, second);
    }
    if (source === 'json') {
      value = body;
    } else if (source === 'body' || source === 'body-deep') {
      if (body !== undefined && !bodyObject) throw errors.badRequest('The request body must be a JSON object');
      value = Object.fromEntries(
        Object.entries(bodyObject ?? {}).map(([k, v]) => [camelCase(k), source === 'body' ? v : camelCaseDeep(v)]),
      );
    } else if (source.startsWith('body.')) {
      if (body !== undefined && !bodyObject) throw errors.badRequest('The request body must be a JSON object');
      value = bodyObject?.[source.slice(5)];
    } else if (source.startsWith('params.')) {
      value = coerce(req.params[source.slice(7)], types.get(name), source.slice(7));
    } else if (source.startsWith('header.')) {
      const raw = req.headers?.[source.slice(7)];
      value = coerce(Array.isArray(raw) ? raw[0] : raw, types.get(name), source.slice(7));
    } else {
      const key = source.slice(6);
      const raw = req.query[key];
      value = coerce(Array.isArray(raw) ? raw[0] : raw, types.get(name), key);
    }
    return value;
  };
  checkBodyFields(row, bodyObject);
  for (const [name, source] of Object.entries(row.variables)) {
    const value = valueOf(name, source);
    if (value !== undefined) vars[name] = value;
  }
  return vars;
}

const MISSING_VARIABLE = /^Variable "\$(\w+)" of required type "([^"]+)" was not provided\.$/;
const BAD_VARIABLE = /^Variable "\$(\w+)" got invalid value (.*?); (.*)$/s;
const NOT_DEFINED = /^Field "(\w+)" is not defined by type "(\w+)"\.(?: Did you mean (.*)\?)?$/;
const FIELD_MISSING = /^Field "(\w+)" of required type "([^"]+)" was not provided\.$/;
const AT_PATH = / at "\w+\.([\w.[\]]+)"$/;

/**
 * graphql-js's refusal of a REST request's variables, in the request's own words (its code stays BAD_USER_INPUT): `Variable "$table" of required type
 * "String!" was not provided.` becomes `table: is required`, an input object's unknown field names the body field as
 * sent (snake_case) and the fields it takes. Answers undefined for anything else.
 */
export function restVariableError(
  row: RouteRow,
  message: string,
  inputFields?: (type: string) => string[],
): AppError | undefined {
  const sourceOf = (variable: string) => {
    const s = row.variables[variable]?.split('|')[0];
    return s === 'body-deep' ? 'body' : s;
  };
  const restName = (variable: string, inner?: string) => {
    const source = sourceOf(variable) ?? '';
    const base =
      source.startsWith('body.') || source.startsWith('query.') || source.startsWith('params.')
        ? source.slice(source.indexOf('.') + 1)
        : source.startsWith('header.')
          ? `${source.slice(7)} header`
          : '';
    const path = inner ? inner.split('.').map(snakeCase).join('.') : '';
    return [base, path].filter(Boolean).join('.') || snakeCase(variable);
  };
  let m = MISSING_VARIABLE.exec(message);
  if (m) return new AppError('BAD_USER_INPUT', `${restName(m[1]!)}: is required`, { field: restName(m[1]!) });
  m = BAD_VARIABLE.exec(message);
  if (!m) return undefined;
  const variable = m[1]!;
  const problem = m[3]!;
  // `got invalid value 123456 at "input.totpCode"; ...`: the path inside the variable.
  const inner = AT_PATH.exec(m[2]!)?.[1];
  const undefinedField = NOT_DEFINED.exec(problem);
  if (undefinedField) {
    const prefix = restName(variable, inner);
    const field = [sourceOf(variable) === 'body' ? '' : prefix, snakeCase(undefinedField[1]!)]
      .filter(Boolean)
      .join('.');
    const allowed = inputFields?.(undefinedField[2]!).map(snakeCase);
    return new AppError(
      'BAD_USER_INPUT',
      `${field}: unknown field${allowed?.length ? `; ${row.method} ${row.path} takes ${allowed.join(', ')}` : ''}`,
      { field, ...(allowed ? { allowed } : {}) },
    );
  }
  const missing = FIELD_MISSING.exec(problem);
  if (missing) {
    const field = [
      sourceOf(variable) === 'body'
        ? inner
          ? inner.split('.').map(snakeCase).join('.')
          : ''
        : restName(variable, inner),
      snakeCase(missing[1]!),
    ]
      .filter(Boolean)
      .join('.');
    return new AppError('BAD_USER_INPUT', `${field}: is required`, { field });
  }
  const field =
    sourceOf(variable) === 'body'
      ? inner
        ? inner.split('.').map(snakeCase).join('.')
        : 'body'
      : restName(variable, inner);
  return new AppError('BAD_USER_INPUT', `${field}: ${problem.replace(/\.$/, '')}`, { field });
}
