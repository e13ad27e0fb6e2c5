// The `where` grammar of the data API, compiled to SQL with bound parameters:
// a plain value means equality (null: IS NULL); an object of operators
// (eq ne gt gte lt lte in nin like ilike isNull contains) compares; `and`/`or` take arrays, `not` an object.
import { errors } from '../../../platform/errors.ts';
import type { ColumnMeta } from './catalog.ts';
import { ident } from './names.ts';

export const OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'like',
  'ilike',
  'isNull',
  'contains',
] as const;
const OPERATOR_SET = new Set<string>(OPERATORS);
const COMPARE: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };
const MAX_DEPTH = 16;

/** Collects bound values; `add` answers the placeholder. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** What a `where` key names: a column (checked against the catalog) or an expression (aggregate alias). */
export type Operand = { sql: string; column?: ColumnMeta };
export type Resolve = (key: string, field: string) => Operand;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function isJsonColumn(c: ColumnMeta | undefined): boolean {
  return c?.typname === 'json' || c?.typname === 'jsonb';
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v;
}

/** A value as bound for a column: JSON text for json columns and vectors, arrays as PostgreSQL arrays. */
export function bindValue(c: ColumnMeta | undefined, v: unknown, field: string): unknown {
  if (v === null || v === undefined) return null;
  if (!c) {
    if (typeof v === 'object')
      throw errors.validation(field, `expected a number, string or boolean, got ${describe(v)}`);
    return v;
  }
  if (isJsonColumn(c)) return JSON.stringify(v);
  if (c.typname === 'vector') {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number'))
      throw errors.validation(field, `expected an array of numbers for column "${c.name}" (${c.type})`);
    return JSON.stringify(v);
  }
  if (c.category === 'A') {
    if (!Array.isArray(v))
      throw errors.validation(field, `expected an array for column "${c.name}" (${c.type}), got ${describe(v)}`);
    return v;
  }
  if (typeof v === 'object')
    throw errors.validation(field, `expected a ${c.type} value for column "${c.name}", got ${describe(v)}`);
  return v;
}

function scalar(op: Operand, v: unknown, field: string): unknown {
  if (v === null || v === undefined) throw errors.validation(field, 'expected a value, got null (use isNull)');
  return bindValue(op.column, v, field);
}

function compileOperator(op: Operand, name: string, v: unknown, p: Params, field: string): string {
  const c = op.sql;
  switch (name) {
    case 'eq':
      return v === null ? `${c} is null` : `${c} = ${p.add(scalar(op, v, field))}`;
    case 'ne':
      return v === null ? `${c} is not null` : `${c} is distinct from ${p.add(scalar(op, v, field))}`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return `${c} ${COMPARE[name]} ${p.add(scalar(op, v, field))}`;
    case 'in':
    case 'nin': {
      if (!Array.isArray(v)) throw errors.validation(field, `expected an array, got ${describe(v)}`);
      if (v.length > 1000) throw errors.validation(field, 'at most 1000 values');
      if (op.column && (op.column.category === 'A' || isJsonColumn(op.column) || op.column.typname === 'vector')) {
        throw errors.validation(
          field,
          `"${name}" works on scalar columns, not on "${op.column.name}" (${op.column.type})`,
        );
      }
      v.forEach((x, i) => {
        if (x === null || typeof x === 'object')
          throw errors.validation(`${field}[${i}]`, `expected a number, string or boolean, got ${describe(x)}`);
      });
      const list = p.add(v);
      return name === 'in' ? `${c} = any(${list})` : `not (${c} = any(${list}))`;
    }
    case 'like':
    case 'ilike': {
      if (typeof v !== 'string') throw errors.validation(field, `expected a pattern string, got ${describe(v)}`);
      const text = op.column && op.column.category !== 'S' ? `${c}::text` : c;
      return `${text} ${name} ${p.add(v)}`;
    }
    case 'isNull':
      if (typeof v !== 'boolean') throw errors.validation(field, `expected true or false, got ${describe(v)}`);
      return v ? `${c} is null` : `${c} is not null`;
    case 'contains': {
      const col = op.column;
      if (col?.typname === 'jsonb') return `${c} @> ${p.add(JSON.stringify(v))}::jsonb`;
      if (col?.category === 'A') {
        if (!Array.isArray(v))
          throw errors.validation(field, `expected an array for column "${col.name}" (${col.type})`);
        return `${c} @> ${p.add(v)}`;
      }
      if (col?.category === 'S') {
        if (typeof v !== 'string') throw errors.validation(field, `expected a string, got ${describe(v)}`);
        return `strpos(${c}, ${p.add(v)}) > 0`;
      }
      throw errors.validation(
        field,
        `"contains" works on text, array and jsonb columns${col ? `, not on "${col.name}" (${col.type})` : ''}`,
      );
    }
  }
  throw errors.validation(field, `unknown operator "${name}"; use one of ${OPERATORS.join(', ')}`);
}

function compileCondition(op: Operand, v: unknown, p: Params, field: string): string {
  if (v === null) return `${op.sql} is null`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    const operators = keys.length > 0 && keys.every((k) => OPERATOR_SET.has(k));
    // A JSON column compared with an object that is not made of operators means equality.
    if (!operators && isJsonColumn(op.column)) return `${op.sql} = ${p.add(JSON.stringify(v))}::jsonb`;
    if (keys.length === 0) throw errors.validation(field, `expected at least one operator (${OPERATORS.join(', ')})`);
    return keys.map((k) => compileOperator(op, k, v[k], p, `${field}.${k}`)).join(' and ');
  }
  if (
    Array.isArray(v) &&
    !(op.column && (op.column.category === 'A' || isJsonColumn(op.column) || op.column.typname === 'vector'))
  ) {
    throw errors.validation(field, 'expected a value or an operator object, got an array (use {"in": [...]})');
  }
  return `${op.sql} = ${p.add(bindValue(op.column, v, field))}`;
}

/** Compiles a `where` object; '' when it has no condition. */
export function compileWhere(where: unknown, resolve: Resolve, p: Params, field = 'where', depth = 0): string {
  if (where === undefined || where === null) return '';
  if (depth > MAX_DEPTH) throw errors.validation(field, `nested more than ${MAX_DEPTH} levels`);
  if (!isPlainObject(where)) throw errors.validation(field, `expected an object, got ${describe(where)}`);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    const f = `${field}.${key}`;
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value) || value.length === 0)
        throw errors.validation(f, 'expected a non-empty array of conditions');
      const subs = value.map((w, i) => compileWhere(w, resolve, p, `${f}[${i}]`, depth + 1) || 'true');
      parts.push(`(${subs.join(key === 'and' ? ' and ' : ' or ')})`);
    } else if (key === 'not') {
      parts.push(`not (${compileWhere(value, resolve, p, f, depth + 1) || 'true'})`);
    } else {
      parts.push(`(${compileCondition(resolve(key, f), value, p, f)})`);
    }
  }
  return parts.join(' and ');
}

/** Compiles `orderBy`: "col", "-col", {"col": "asc"|"desc"}, {column, direction}, or a list of these. */
export function compileOrderBy(orderBy: unknown, resolve: Resolve): string {
  if (orderBy === undefined || orderBy === null) return '';
  const items = Array.isArray(orderBy) ? orderBy : [orderBy];
  if (items.length > 32) throw errors.validation('orderBy', 'at most 32 sort keys');
  const out: string[] = [];
  const dir = (d: unknown, field: string): string => {
    if (d === undefined || d === null) return 'asc';
    if (typeof d === 'string' && /^(asc|desc)$/i.test(d)) return d.toLowerCase();
    throw errors.validation(field, `expected "asc" or "desc", got ${JSON.stringify(d)}`);
  };
  items.forEach((item, i) => {
    const f = Array.isArray(orderBy) ? `orderBy[${i}]` : 'orderBy';
    if (typeof item === 'string') {
      const desc = item.startsWith('-');
      const name = desc ? item.slice(1) : item;
      out.push(`${resolve(name, f).sql} ${desc ? 'desc' : 'asc'}`);
    } else if (isPlainObject(item) && typeof item.column === 'string') {
      out.push(`${resolve(item.column, `${f}.column`).sql} ${dir(item.direction, `${f}.direction`)}`);
    } else if (isPlainObject(item) && Object.keys(item).length > 0) {
      for (const [k, d] of Object.entries(item)) out.push(`${resolve(k, `${f}.${k}`).sql} ${dir(d, `${f}.${k}`)}`);
    } else {
      throw errors.validation(f, 'expected "column", "-column" or {"column": "asc" | "desc"}');
    }
  });
  return out.length > 0 ? ` order by ${out.join(', ')}` : '';
}

/** A page size: `def` when omitted, 1..max otherwise. */
export function checkLimit(v: unknown, def: number, max: number, field = 'limit'): number {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
    throw errors.validation(field, `expected a whole number from 1 to ${max}, got ${JSON.stringify(v)}`);
  return v;
}

export { ident };
