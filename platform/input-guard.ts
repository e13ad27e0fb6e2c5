// What every input crosses before any domain sees it: JSON nested no deeper than a limit, and text that
// PostgreSQL can store (no NUL character, no lone UTF-16 surrogate: `text` and `jsonb` refuse both, which
// used to surface as 500s from whichever domain met them first). Checked once at the edges (request bodies,
// query strings, path parameters, GraphQL variables, webhook bodies), so every domain is covered.
import { AppError } from './errors.ts';

/** JavaScript dates reach years ±271,821, PostgreSQL's timestamptz only 4713 BC to 294,276 AD: times from 0001 to 9999 are accepted. */
export function isStorableTime(d: Date): boolean {
  const t = d.getTime();
  return !Number.isNaN(t) && t >= MIN_TIME && t <= MAX_TIME;
}
const MIN_TIME = Date.parse('0001-01-01T00:00:00Z');
const MAX_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/** Why a string cannot be stored, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'contains a NUL character (\\u0000), which cannot be stored';
  if (!s.isWellFormed()) return 'contains a lone UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

function pathText(path: (string | number)[]): string {
  if (path.length === 0) return 'the value';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function refuse(
  where: string,
  path: (string | number)[],
  problem: string,
  extra: Record<string, unknown> = {},
): AppError {
  const field = pathText(path);
  return new AppError('VALIDATION_FAILED', `${where}: ${field} ${problem}`, { field, source: where, ...extra });
}

/**
 * Checks a parsed JSON value (iteratively: no recursion, so no depth can overflow the stack): nesting at most
 * `maxDepth` arrays/objects deep, and every string and key storable. Throws a 400 naming the first problem.
 */
export function checkJsonValue(value: unknown, opts: { maxDepth: number; where: string }): void {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) throw refuse(opts.where, [], problem);
    }
    return;
  }
  // [value, depth, path] — the path is rebuilt only for the error, from parents.
  type Frame = { v: unknown; depth: number; parent: Frame | undefined; key: string | number };
  const stack: Frame[] = [{ v: value, depth: 1, parent: undefined, key: '' }];
  const pathOf = (f: Frame | undefined, last?: string | number): (string | number)[] => {
    const out: (string | number)[] = last === undefined ? [] : [last];
    for (let p = f; p && p.parent; p = p.parent) out.unshift(p.key);
    return out;
  };
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.depth > opts.maxDepth) {
      throw new AppError(
        'VALIDATION_FAILED',
        `${opts.where}: JSON nested deeper than ${opts.maxDepth} levels (TESSERA_JSON_MAX_DEPTH)`,
        {
          field: pathText(pathOf(f.parent, f.key).slice(0, 8)),
          source: opts.where,
          limit: 'json_depth',
          max: opts.maxDepth,
        },
      );
    }
    if (Array.isArray(f.v)) {
      for (let i = 0; i < f.v.length; i++) {
        const item: unknown = f.v[i];
        if (typeof item === 'string') {
          const problem = textProblem(item);
          if (problem) throw refuse(opts.where, pathOf(f, i), problem);
        } else if (item !== null && typeof item === 'object')
          stack.push({ v: item, depth: f.depth + 1, parent: f, key: i });
      }
    } else {
      for (const [k, item] of Object.entries(f.v as Record<string, unknown>)) {
        const keyProblem = textProblem(k);
        if (keyProblem) throw refuse(opts.where, pathOf(f), `has a key that ${keyProblem}`);
        if (typeof item === 'string') {
          const problem = textProblem(item);
          if (problem) throw refuse(opts.where, pathOf(f, k), problem);
        } else if (item !== null && typeof item === 'object')
          stack.push({ v: item, depth: f.depth + 1, parent: f, key: k });
      }
    }
  }
}

/** Checks the strings of a flat record (query string, path parameters, form fields). */
export function checkTextRecord(record: unknown, where: string): void {
  if (!record || typeof record !== 'object') return;
  for (const [k, v] of Object.entries(record as Record<string, unknown>)) {
    const keyProblem = textProblem(k);
    if (keyProblem) throw refuse(where, [], `has a name that ${keyProblem}`);
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item !== 'string') continue;
      const problem = textProblem(item);
      if (problem) throw refuse(where, [k], problem);
    }
  }
}

/**
 * Parses JSON text and checks it. Malformed JSON is a 400; prototype-poisoning keys (`__proto__`, and
 * `constructor.prototype`) are refused as Fastify's own parser does.
 */
export function parseCheckedJson(text: string, opts: { maxDepth: number; where: string }): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('BAD_REQUEST', `${opts.where} is not valid JSON: ${(err as Error).message}`);
  }
  checkJsonValue(value, opts);
  if (text.includes('__proto__') || text.includes('constructor')) refusePoisoning(value, opts.where);
  return value;
}

function refusePoisoning(value: unknown, where: string): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v)) {
      if (Object.hasOwn(v, '__proto__')) throw new AppError('BAD_REQUEST', `${where} has a forbidden "__proto__" key`);
      const c = (v as Record<string, unknown>).constructor;
      if (Object.hasOwn(v, 'constructor') && c && typeof c === 'object' && Object.hasOwn(c, 'prototype'))
        throw new AppError('BAD_REQUEST', `${where} has a forbidden "constructor.prototype" key`);
    }
    for (const item of Object.values(v)) if (item !== null && typeof item === 'object') stack.push(item);
  }
}
