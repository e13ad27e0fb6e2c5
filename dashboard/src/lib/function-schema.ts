// A function definition's JSON schema (the rules the functions service checks on save: names, kinds and the fields
// of each kind, limits), so the editor shows mistakes as they are typed, each on its line. The service stays the
// judge: what it refuses is shown the same way.
import { Validator } from '@cfworker/json-schema';
import { findNodeAtLocation, parse, parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';

const COMMON = ['name', 'kind', 'when', 'return', 'retries'];
const KINDS: Record<string, { fields: string[]; required: string[] }> = {
  Transform: { fields: ['expression'], required: ['expression'] },
  Database: { fields: ['query'], required: ['query'] },
  HTTP: { fields: ['request'], required: ['request'] },
  Email: { fields: ['template', 'to', 'variables'], required: ['template', 'to'] },
  Invoke: { fields: ['function', 'input', 'async'], required: ['function'] },
};

export const FUNCTION_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['name', 'steps'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$' },
    slug: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,63}$' },
    description: { type: 'string', maxLength: 1000 },
    public: { type: 'boolean' },
    timeout_ms: { type: 'integer', minimum: 1, maximum: 300000 },
    retries: { type: 'integer', minimum: 0, maximum: 10 },
    steps: { type: 'array', minItems: 1, maxItems: 50, items: { $ref: '#/$defs/step' } },
  },
  $defs: {
    step: {
      type: 'object',
      required: ['name', 'kind'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' },
        kind: { enum: Object.keys(KINDS) },
        return: { type: 'boolean' },
        retries: { type: 'integer', minimum: 0, maximum: 10 },
        query: {
          type: 'object',
          required: ['action'],
          properties: { action: { type: 'string' }, table: { type: 'string' } },
        },
        request: {
          type: 'object',
          required: ['url'],
          properties: {
            method: { type: 'string' },
            url: { type: 'string' },
            timeout_ms: { type: 'integer', minimum: 1 },
          },
        },
        async: { type: 'boolean' },
      },
      allOf: Object.entries(KINDS).map(([kind, k]) => ({
        if: { properties: { kind: { const: kind } }, required: ['kind'] },
        then: { required: k.required, propertyNames: { enum: [...COMMON, ...k.fields] } },
      })),
    },
  },
} as const;

export type Issue = { line: number; path: string; message: string };

const validator = new Validator(FUNCTION_SCHEMA as unknown as Record<string, unknown>, '2020-12', false);

/** The line (1-based) of an offset. */
function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** The line of a JSON path (`steps/0/kind`) in the text, or of its nearest parent that exists. */
export function lineOfPath(text: string, path: (string | number)[]): number {
  const root = parseTree(text);
  if (!root) return 1;
  for (let n = path.length; n >= 0; n--) {
    const node = findNodeAtLocation(root, path.slice(0, n));
    if (node) return lineOf(text, node.parent?.type === 'property' ? node.parent.offset : node.offset);
  }
  return 1;
}

const pathOf = (location: string): (string | number)[] =>
  location
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : decodeURIComponent(s.replace(/~1/g, '/').replace(/~0/g, '~'))));

/** Checks the editor's text: JSON syntax first, then the schema. Answers the value (when it parses) and the issues. */
export function checkDefinitionText(text: string): { value: unknown; issues: Issue[] } {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: false, disallowComments: true });
  if (errors.length) {
    return {
      value: undefined,
      issues: errors.map((e) => ({
        line: lineOf(text, e.offset),
        path: '',
        message: `JSON: ${printParseErrorCode(e.error)}`,
      })),
    };
  }
  const result = validator.validate(value);
  if (result.valid) return { value, issues: [] };
  // Keep the most precise errors: drop the summaries of a place when something deeper inside it is named, and the
  // "does not match" lines of if/then and $ref wrappers.
  const errs = result.errors.filter((e) => !['allOf', 'if', '$ref', 'items', 'properties'].includes(e.keyword));
  const kept = errs.filter(
    (e) => !errs.some((o) => o !== e && o.instanceLocation.startsWith(`${e.instanceLocation}/`)),
  );
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const e of kept.length ? kept : result.errors) {
    const path = pathOf(e.instanceLocation);
    const message = `${path.join('.') || 'definition'}: ${e.error}`;
    if (seen.has(message)) continue;
    seen.add(message);
    issues.push({ line: lineOfPath(text, path), path: path.join('.'), message });
  }
  return { value, issues };
}

/** A new function's starting definition. */
export const NEW_FUNCTION = `{
  "name": "hello",
  "description": "Greets whoever calls it",
  "steps": [
    {
      "name": "greet",
      "kind": "Transform",
      "expression": { "message": "Hello, {{ input.body.name }}!" },
      "return": true
    }
  ]
}
`;
