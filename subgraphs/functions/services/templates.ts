// Templates of function steps: `{{ expression }}` placeholders inside strings, objects and arrays,
// evaluated over `{input, steps, secrets, env}` plus a few helpers. Expressions are parsed and run by
// angular-expressions in its interpreter mode (`csp: true`: no Function, no eval), every member access
// of which only reads own properties. On top of that we refuse assignments, filters, `this`/`$locals`
// and unknown names when a template is saved, and evaluate only over plain JSON data and plain helper
// functions, so an expression cannot climb to a prototype or reach Node.
import crypto from 'node:crypto';
import expressions from 'angular-expressions';
import escapeHtml from 'escape-html';
import { LRUCache } from 'lru-cache';
import { constantTimeEqual, hmac, SIGNATURE_HELPERS } from './signatures.ts';

/** A problem with a template: `path` locates it inside the step field (e.g. `headers.authorization`). */
export class TemplateError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.name = 'TemplateError';
    this.path = path;
  }
}

/** Helpers callable from every expression. Each takes and returns plain values. */
export const HELPERS: Record<string, (...args: never[]) => unknown> = {
  /** HMAC-SHA256 of `data` keyed by `key`: hex (default), or `"base64"` / `"base64url"` of the digest's bytes. */
  hmacSha256: (key: unknown, data: unknown, encoding?: unknown) => hmac('sha256', key, data, encoding),
  /** SHA-256 of `data`, hex. */
  sha256: (data: unknown) => crypto.createHash('sha256').update(text(data)).digest('hex'),
  /** Constant-time string comparison. */
  safeEqual: (a: unknown, b: unknown) => constantTimeEqual(a, b),
  // hmacSha1, hmacSha512, verifyStandardWebhook, verifyStripeSignature, timestampWithin (signatures.ts)
  ...SIGNATURE_HELPERS,
  /** Base64 of a string's UTF-8 bytes. */
  base64: (s: unknown) => Buffer.from(text(s), 'utf8').toString('base64'),
  /** The UTF-8 text of a base64 string. */
  base64Decode: (s: unknown) => Buffer.from(text(s), 'base64').toString('utf8'),
  /** JSON text of a value. */
  json: (v: unknown) => JSON.stringify(v ?? null),
  /** The value of a JSON text (null when it does not parse). */
  parseJson: (s: unknown) => {
    try {
      return JSON.parse(text(s)) as unknown;
    } catch {
      return null;
    }
  },
  /** The current time, ISO 8601. */
  now: () => new Date().toISOString(),
  /** Milliseconds since the epoch. */
  timestamp: () => Date.now(),
  lower: (s: unknown) => text(s).toLowerCase(),
  upper: (s: unknown) => text(s).toUpperCase(),
  /** A random UUID. */
  uuid: () => crypto.randomUUID(),
};

/** The names an expression may start from. */
export const ROOTS = ['input', 'steps', 'secrets', 'env'] as const;
const ALLOWED = new Set<string>([...ROOTS, ...Object.keys(HELPERS)]);

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

type AstNode = { type: string; [key: string]: unknown };

export type CompiledExpression = { evaluate: (scope: Record<string, unknown>) => unknown; stepRefs: string[] };

const FORBIDDEN_NODES: Record<string, string> = {
  AssignmentExpression: 'assignments are not allowed',
  ThisExpression: '`this` is not allowed',
  LocalsExpression: '`$locals` is not allowed',
  NGValueParameter: 'is not allowed',
};

/** Header names are case-insensitive: `input.headers['X-Sig']` and `input.headers.X_Sig` read the lower-case key. */
function lowerHeaderLookups(src: string): string {
  const tokens = new expressions.Lexer({}) as unknown as {
    lex: (s: string) => { index: number; text: string; value?: unknown; identifier?: boolean; constant?: boolean }[];
  };
  const list = tokens.lex(src);
  const edits: { at: number; len: number; text: string }[] = [];
  for (let i = 0; i + 3 < list.length; i++) {
    if (list[i]!.text !== 'input' || list[i + 1]!.text !== '.' || list[i + 2]!.text !== 'headers') continue;
    if (i > 0 && list[i - 1]!.text === '.') continue;
    const next = list[i + 3]!;
    const key = list[i + 4];
    if (next.text === '[' && key?.constant && typeof key.value === 'string' && list[i + 5]?.text === ']') {
      edits.push({ at: key.index, len: key.text.length, text: JSON.stringify(key.value.toLowerCase()) });
    } else if (next.text === '.' && key?.identifier) {
      edits.push({ at: key.index, len: key.text.length, text: key.text.toLowerCase() });
    }
  }
  let out = src;
  for (const e of edits.reverse()) out = out.slice(0, e.at) + e.text + out.slice(e.at + e.len);
  return out;
}

/** Walks an expression's AST: refuses what is not allowed and collects `steps.<name>` references. */
function inspect(node: unknown, refs: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) inspect(n, refs);
    return;
  }
  const n = node as AstNode;
  const why = FORBIDDEN_NODES[n.type];
  if (why) throw new Error(n.type === 'NGValueParameter' ? `${n.type} ${why}` : why);
  switch (n.type) {
    case 'Program':
      if ((n.body as unknown[]).length !== 1) throw new Error('exactly one expression is allowed (no `;`)');
      inspect(n.body, refs);
      return;
    case 'Identifier':
      if (!ALLOWED.has(n.name as string))
        throw new Error(
          `unknown name "${String(n.name)}" (use ${[...ROOTS].join(', ')} or a helper: ${Object.keys(HELPERS).join(', ')})`,
        );
      return;
    case 'MemberExpression': {
      const obj = n.object as AstNode;
      const prop = n.property as AstNode;
      if (obj.type === 'Identifier' && obj.name === 'steps') {
        if (!n.computed && prop.type === 'Identifier') refs.add(prop.name as string);
        else if (n.computed && prop.type === 'Literal' && typeof prop.value === 'string') refs.add(prop.value);
        else throw new Error('steps must be named literally (steps.<name>)');
      }
      inspect(obj, refs);
      if (n.computed) inspect(prop, refs);
      return;
    }
    case 'CallExpression':
      if (n.filter) throw new Error('filters (`|`) are not allowed: call a helper instead, e.g. json(value)');
      inspect(n.callee, refs);
      inspect(n.arguments, refs);
      return;
    case 'Property':
      if (n.computed) inspect(n.key, refs);
      inspect(n.value, refs);
      return;
    default:
      for (const [key, value] of Object.entries(n)) {
        if (key === 'type' || key === 'constant' || key === 'toWatch' || key === 'isPure') continue;
        if (value && typeof value === 'object') inspect(value, refs);
      }
  }
}

const compiled = new LRUCache<string, CompiledExpression | Error>({ max: 2000 });

/** Runs `fn` and puts back `Function.prototype.constructor`, which the library removes while it evaluates (and would leave removed if the expression throws). */
function guarded<T>(fn: () => T): T {
  const descriptor = Object.getOwnPropertyDescriptor(Function.prototype, 'constructor')!;
  try {
    return fn();
  } finally {
    if (!Object.getOwnPropertyDescriptor(Function.prototype, 'constructor'))
      Object.defineProperty(Function.prototype, 'constructor', descriptor);
  }
}

/**
 * The keys of an expression that is only a path from a root name (`input.body.sku`, `steps.save.body.rows[0]`,
 * `input.headers['x-sig']`); null for anything else. Most placeholders are such paths: they are read directly,
 * without a round through the library's interpreter (which also swaps `Function.prototype.constructor` out and
 * back on every evaluation, a cost the whole process pays).
 */
function plainPath(ast: AstNode): string[] | null {
  const body = ast.body as AstNode[] | undefined;
  if (ast.type !== 'Program' || body?.length !== 1 || body[0]!.type !== 'ExpressionStatement') return null;
  const keys: string[] = [];
  let n = body[0]!.expression as AstNode;
  while (n.type === 'MemberExpression') {
    const prop = n.property as AstNode;
    if (!n.computed && prop.type === 'Identifier') keys.push(prop.name as string);
    else if (
      n.computed &&
      prop.type === 'Literal' &&
      (typeof prop.value === 'string' || typeof prop.value === 'number')
    )
      keys.push(String(prop.value));
    else return null;
    n = n.object as AstNode;
  }
  if (n.type !== 'Identifier') return null;
  keys.push(n.name as string);
  return keys.reverse();
}

/** Reads a path with the interpreter's rules: own properties only, and `undefined` past a missing step or a null. */
function readPath(scope: Record<string, unknown>, path: string[]): unknown {
  let v: unknown = scope;
  for (const key of path) {
    if (v === null || v === undefined || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Parses and checks one expression (the text between `{{` and `}}`); throws Error with the reason. */
export function compileExpression(source: string): CompiledExpression {
  const hit = compiled.get(source);
  if (hit instanceof Error) throw hit;
  if (hit) return hit;
  let result: CompiledExpression | Error;
  try {
    if (source.trim() === '') throw new Error('empty expression');
    const fn = guarded(() =>
      expressions.compile(lowerHeaderLookups(source), {
        csp: true,
        cache: {},
        filters: Object.create(null) as never,
      } as never),
    );
    const refs = new Set<string>();
    inspect(fn.ast, refs);
    const path = plainPath(fn.ast as AstNode);
    result = {
      stepRefs: [...refs],
      evaluate: path ? (scope) => readPath(scope, path) : (scope) => guarded(() => fn(scope)),
    };
  } catch (err) {
    // The library's messages carry an AngularJS error URL after a newline; keep the readable part.
    const message = String((err as Error).message ?? err)
      .split('\n')[0]!
      .replace(/^\[\$parse:\w+\]\s*/, '');
    result = new Error(message);
  }
  compiled.set(source, result);
  if (result instanceof Error) throw result;
  return result;
}

type Part = { text: string } | { expr: CompiledExpression; source: string };

/** Splits a string into literal text and `{{ … }}` expressions (quotes and nested braces respected). */
function splitString(s: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  let literal = '';
  while (i < s.length) {
    const start = s.indexOf('{{', i);
    if (start < 0) {
      literal += s.slice(i);
      break;
    }
    literal += s.slice(i, start);
    let j = start + 2;
    let depth = 0;
    let quote: string | undefined;
    let end = -1;
    for (; j < s.length; j++) {
      const c = s[j]!;
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = undefined;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0 && s[j + 1] === '}') {
          end = j;
          break;
        }
        depth = Math.max(0, depth - 1);
      }
    }
    if (end < 0) throw new Error('a `{{` is not closed by `}}`');
    if (literal) parts.push({ text: literal });
    literal = '';
    const source = s.slice(start + 2, end);
    let expr: CompiledExpression;
    try {
      expr = compileExpression(source);
    } catch (err) {
      throw new Error(`{{${source}}}: ${(err as Error).message}`);
    }
    parts.push({ expr, source });
    i = end + 2;
  }
  if (literal) parts.push({ text: literal });
  return parts;
}

/** A template ready to render: a function of the scope, and the step names it reads. */
export type Template = { render: (scope: Record<string, unknown>) => unknown; stepRefs: string[] };

const MAX_DEPTH = 32;

/**
 * Compiles a template value: a string with placeholders, or an object/array whose strings are templates.
 * A string that is exactly one `{{ … }}` renders to the value's own type; text around placeholders makes
 * a string. Throws TemplateError naming the path of the bad string.
 */
export function compileTemplate(value: unknown, path = ''): Template {
  const refs = new Set<string>();
  const build = (v: unknown, at: string, depth: number): ((scope: Record<string, unknown>) => unknown) => {
    if (depth > MAX_DEPTH) throw new TemplateError(at, `is nested deeper than ${MAX_DEPTH} levels`);
    if (typeof v === 'string') {
      let parts: Part[];
      try {
        parts = splitString(v);
      } catch (err) {
        throw new TemplateError(at, (err as Error).message);
      }
      for (const p of parts) if ('expr' in p) p.expr.stepRefs.forEach((r) => refs.add(r));
      if (parts.length === 0) return () => '';
      if (parts.every((p) => 'text' in p)) return () => v;
      const only = parts.length === 1 ? parts[0]! : undefined;
      if (only && 'expr' in only) return (scope) => run(only.expr, only.source, scope, at);
      return (scope) => parts.map((p) => ('text' in p ? p.text : text(run(p.expr, p.source, scope, at)))).join('');
    }
    if (Array.isArray(v)) {
      const items = v.map((item, i) => build(item, `${at}[${i}]`, depth + 1));
      return (scope) => items.map((f) => f(scope));
    }
    if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v).map(([k, item]) => [k, build(item, at ? `${at}.${k}` : k, depth + 1)] as const);
      return (scope) => {
        const out: Record<string, unknown> = {};
        for (const [k, f] of entries) out[k] = f(scope);
        return out;
      };
    }
    return () => v;
  };
  const render = build(value, path, 0);
  return { render, stepRefs: [...refs] };
}

function run(expr: CompiledExpression, source: string, scope: Record<string, unknown>, at: string): unknown {
  try {
    return plain(expr.evaluate(scope));
  } catch (err) {
    throw new TemplateError(at, `{{${source}}} failed: ${(err as Error).message}`);
  }
}

/** Keeps only JSON data (functions and other non-JSON values become undefined). */
function plain(v: unknown): unknown {
  if (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') return undefined;
  return v;
}

/** The scope an expression sees: plain JSON data and the helpers, on an object without a prototype. */
export function templateScope(data: {
  input: unknown;
  steps: unknown;
  secrets: unknown;
  env: unknown;
}): Record<string, unknown> {
  const scope = Object.create(null) as Record<string, unknown>;
  Object.assign(scope, HELPERS);
  scope.input = data.input;
  scope.steps = data.steps;
  scope.secrets = data.secrets;
  scope.env = data.env;
  return scope;
}

/** True when a rendered value counts as true for `when`. */
export function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return Boolean(v);
}

/**
 * Renders an e-mail template string over `variables` (names used directly: `{{ name }}`). With `html`,
 * every placeholder's value is HTML-escaped. Throws TemplateError on bad templates.
 */
export function renderMailText(
  source: string,
  variables: Record<string, unknown>,
  html: boolean,
  path: string,
): string {
  let parts: { text: string }[] | { text?: string; source?: string }[];
  try {
    parts = splitMailParts(source);
  } catch (err) {
    throw new TemplateError(path, (err as Error).message);
  }
  const scope = Object.create(null) as Record<string, unknown>;
  Object.assign(scope, HELPERS);
  for (const [k, v] of Object.entries(variables)) scope[k] = v;
  return parts
    .map((p) => {
      if (p.source === undefined) return p.text ?? '';
      const value = text(mailExpression(p.source, path).evaluate(scope));
      return html ? escapeHtml(value) : value;
    })
    .join('');
}

/** The variable names an e-mail template string reads (its placeholders' root names, helpers left out). */
export function mailVariables(source: string, path: string): string[] {
  const names = new Set<string>();
  for (const p of splitMailParts(source))
    if (p.source !== undefined) for (const n of mailExpression(p.source, path).names) names.add(n);
  return [...names];
}

const mailCompiled = new LRUCache<string, { evaluate: (scope: Record<string, unknown>) => unknown; names: string[] }>({
  max: 2000,
});

/** E-mail placeholders name variables directly, so any identifier is allowed; the rest of the rules hold. */
function mailExpression(source: string, path: string) {
  const hit = mailCompiled.get(source);
  if (hit) return hit;
  try {
    const fn = guarded(() =>
      expressions.compile(source, { csp: true, cache: {}, filters: Object.create(null) as never } as never),
    );
    const names = new Set<string>();
    const walk = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(walk);
      const n = node as AstNode;
      const why = FORBIDDEN_NODES[n.type];
      if (why) throw new Error(why);
      if (n.type === 'Program' && (n.body as unknown[]).length !== 1)
        throw new Error('exactly one expression is allowed (no `;`)');
      if (n.type === 'CallExpression' && n.filter) throw new Error('filters (`|`) are not allowed');
      if (n.type === 'Identifier') {
        if (!((n.name as string) in HELPERS)) names.add(n.name as string);
        return;
      }
      if (n.type === 'MemberExpression') {
        walk(n.object);
        if (n.computed) walk(n.property);
        return;
      }
      if (n.type === 'Property') {
        if (n.computed) walk(n.key);
        walk(n.value);
        return;
      }
      for (const [k, v] of Object.entries(n))
        if (k !== 'type' && k !== 'toWatch' && v && typeof v === 'object') walk(v);
    };
    walk(fn.ast);
    const entry = { evaluate: (scope: Record<string, unknown>) => plain(guarded(() => fn(scope))), names: [...names] };
    mailCompiled.set(source, entry);
    return entry;
  } catch (err) {
    throw new TemplateError(
      path,
      `{{${source}}}: ${String((err as Error).message)
        .split('\n')[0]!
        .replace(/^\[\$parse:\w+\]\s*/, '')}`,
    );
  }
}

function splitMailParts(s: string): { text?: string; source?: string }[] {
  const out: { text?: string; source?: string }[] = [];
  let i = 0;
  while (i < s.length) {
    const start = s.indexOf('{{', i);
    if (start < 0) {
      out.push({ text: s.slice(i) });
      break;
    }
    out.push({ text: s.slice(i, start) });
    const end = s.indexOf('}}', start + 2);
    if (end < 0) throw new Error('a `{{` is not closed by `}}`');
    out.push({ source: s.slice(start + 2, end) });
    i = end + 2;
  }
  return out;
}
