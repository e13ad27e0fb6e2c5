// Builds an operation's variables from a REST request as its route row says.
import { Kind, parse, type OperationDefinitionNode, type TypeNode } from 'graphql';
import type { RouteRow } from './route-types.ts';
import { errors } from '../platform/errors.ts';

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

/** Maps the request onto the row's variables; values missing from the request are left out. */
export function variablesFor(row: RouteRow, req: RestRequest, types: Map<string, string>): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  const body = req.body;
  const bodyObject =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const valueOf = (name: string, source: string): unknown => {
    let value: unknown;
    if (source.includes('|')) {
      const [first, second] = source.split('|') as [string, string];
      value = valueOf(name, first);
      return value !== undefined ? value : valueOf(name, second);
    }
    if (source === 'json') {
      value = body;
    } else if (source === 'body') {
      if (body !== undefined && !bodyObject) throw errors.badRequest('The request body must be a JSON object');
      value = Object.fromEntries(Object.entries(bodyObject ?? {}).map(([k, v]) => [camelCase(k), v]));
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
  for (const [name, source] of Object.entries(row.variables)) {
    const value = valueOf(name, source);
    if (value !== undefined) vars[name] = value;
  }
  return vars;
}
