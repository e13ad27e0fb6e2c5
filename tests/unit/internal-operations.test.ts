// The table of internal operations (platform/internal-operations.ts) is the only place a service, a handler, the
// platform or the router writes a GraphQL document: every entry validates against the composed supergraph (with its
// @inaccessible fields, as the router's fast path plans them) and against the schema of the subgraph declared to
// answer it, has the operation name it declares, and is called from exactly the places its `callers` name.
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from '@jest/globals';
import { Kind, parse, validate, type OperationDefinitionNode } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { createPlanner } from '../../router/planner.ts';
import { ROOT, SUPERGRAPH_FILE, readSupergraphConfig } from '../../router/compose.ts';
import {
  allInternalOperations,
  callInternal,
  INTERNAL_OPERATIONS,
  isAnswerError,
  type Caller,
} from '../../platform/internal-operations.ts';
import { AppError, shapeError } from '../../platform/errors.ts';

const planner = createPlanner(fs.readFileSync(SUPERGRAPH_FILE, 'utf8'));
const subgraphSchemas = new Map(
  readSupergraphConfig().map((e) => [e.name, buildSubgraphSchema(parse(fs.readFileSync(e.schemaFile, 'utf8')))]),
);
const operations = allInternalOperations();

/** Source files (not tests) under the folders where operations are called. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'migrations') out.push(...sources(rel));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(rel);
    }
  }
  return out;
}
const SCANNED = ['subgraphs', 'platform', 'router', 'rest-compat'].flatMap(sources);
const TABLE = path.join('platform', 'internal-operations.ts');
const text = new Map(SCANNED.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]));

function callerOf(file: string): Caller {
  const [top, sub] = file.split(path.sep);
  if (top === 'subgraphs') return sub as Caller;
  if (top === 'rest-compat') return 'front door';
  return top as Caller;
}

describe('the table of internal operations', () => {
  it.each(operations.map((o) => [o.key, o.operation] as const))(
    '%s validates against the supergraph and is answered by its subgraph',
    (_key, operation) => {
      const doc = parse(operation.document);
      const defs = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      expect(defs.map((d) => d.name?.value)).toEqual([operation.name]);
      // As the router plans it (the whole supergraph, internal fields included): throws when it does not validate.
      const subgraphs = planner.subgraphsOf(operation.document);
      expect(subgraphs[0]).toBe(operation.subgraph);
      // And as the answering subgraph's executor checks it.
      expect(validate(subgraphSchemas.get(operation.subgraph)!, doc).map((e) => e.message)).toEqual([]);
      expect(operation.callers.length).toBeGreaterThan(0);
      expect(operation.description.length).toBeGreaterThan(10);
    },
  );

  it('has callers exactly where each entry says', () => {
    const problems: string[] = [];
    for (const { key, operation } of operations) {
      const needle = key.startsWith('DATABASE_STEP_OPERATIONS.')
        ? 'DATABASE_STEP_OPERATIONS['
        : `INTERNAL_OPERATIONS.${key}`;
      const pattern = new RegExp(`${needle.replace(/[.[]/g, '\\$&')}${needle.endsWith('[') ? '' : '(?![A-Za-z0-9_])'}`);
      const found = new Set<Caller>();
      for (const [file, src] of text) if (file !== TABLE && pattern.test(src)) found.add(callerOf(file));
      if ([...found].sort().join() !== [...operation.callers].sort().join())
        problems.push(
          `${key}: declared ${operation.callers.join(', ')}; called from ${[...found].join(', ') || 'nowhere'}`,
        );
    }
    expect(problems).toEqual([]);
  });

  it('is the only place services, handlers, the platform and the router write a GraphQL operation', () => {
    // A string that starts like an operation (`query Name(`, `mutation {`, ...) or like an anonymous one (`{ field(` / `{ _field {`).
    const operationString =
      /(['"`])\s*(?:(?:query|mutation|subscription)\b\s*[A-Za-z_]\w*\s*[({]|(?:query|mutation|subscription)\s*[({]|\{\s*_?[A-Za-z]\w*\s*(?::\s*[A-Za-z_]\w*\s*)?[({])/;
    // The REST route table is the documented REST → GraphQL map; GraphiQL's page shows an example document;
    // the tenant subgraph's test harness (testing.ts) is test code.
    const allowed = new Set([
      TABLE,
      path.join('rest-compat', 'graphiql.ts'),
      path.join('subgraphs', 'tenant', 'testing.ts'),
    ]);
    // The scan finds what it is meant to find.
    for (const sample of [
      "const DRY_RUN = 'mutation DatabaseStepDryRun($operations: JSON!) { result: dataTransaction(operations: $operations) { results } }';",
      'const RULES = `query CorsRules { _corsRules {',
      "await router.run('{ _hookTriggers(projectId: $p) { table } }', vars, ctx);",
      'run(`mutation($id: ID!) { x(id: $id) }`)',
    ])
      expect({ sample, found: operationString.test(sample) }).toEqual({ sample, found: true });
    for (const sample of [
      "const SELECT = 'select h.*, f.name from function_hooks h';",
      "log(`{${events.join(',')}}`)",
      '\'{ "error": 1 }\'',
    ]) {
      expect({ sample, found: operationString.test(sample) }).toEqual({ sample, found: false });
    }
    const offenders: string[] = [];
    for (const [file, src] of text) {
      if (allowed.has(file) || file.startsWith(path.join('rest-compat', 'routes') + path.sep)) continue;
      src.split('\n').forEach((line, i) => {
        if (operationString.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});

describe('callInternal', () => {
  const ctx = { requestId: 't', principal: { kind: 'internal' } } as const;

  it('answers the data, and turns the worst GraphQL error into the error table’s AppError', async () => {
    const ok = { run: async () => ({ data: { _corsRules: [] } }) };
    expect(await callInternal(ok, INTERNAL_OPERATIONS.corsRules, {}, ctx)).toEqual({ _corsRules: [] });
    const failing = {
      run: async () => ({
        errors: [
          { message: 'bad', extensions: { code: 'VALIDATION_FAILED' } },
          { message: 'gone', extensions: { code: 'SERVICE_UNAVAILABLE', details: { retry_after: 1 } } },
        ],
      }),
    };
    const err = await callInternal(failing, INTERNAL_OPERATIONS.corsRules, {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'gone', details: { retry_after: 1 } });
    expect(isAnswerError(err)).toBe(true);
  });

  it('keeps an unknown code as INTERNAL, masked when shown', async () => {
    const weird = {
      execute: async () => ({ errors: [{ message: 'secret stack', extensions: { code: 'SOMETHING_ELSE' } }] }),
    };
    const err = await callInternal(weird, INTERNAL_OPERATIONS.corsRules, {}, ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INTERNAL', message: 'secret stack' });
    expect(shapeError(err)).toMatchObject({ code: 'INTERNAL', message: 'Internal error', masked: true, status: 500 });
  });

  it('passes a failure to reach the subgraph through as thrown (not an answer)', async () => {
    const away = { run: async () => Promise.reject(new AppError('SERVICE_UNAVAILABLE', 'router unreachable')) };
    const err = await callInternal(away, INTERNAL_OPERATIONS.corsRules, {}, ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'router unreachable' });
    expect(isAnswerError(err)).toBe(false);
  });

  it('refuses to run an internal-only operation as another principal', async () => {
    const run = { run: async () => ({ data: {} }) };
    await expect(
      callInternal(run, INTERNAL_OPERATIONS.corsRules, {}, { requestId: 't', principal: { kind: 'anonymous' } }),
    ).rejects.toMatchObject({ code: 'INTERNAL' });
  });
});
