// The table of data actions (platform/data-actions.ts) is what the REST rows and the functions' Database step are
// generated from; the data subgraph's SDL is written by hand. This checks the two say the same: every action is a
// root field of the right type with exactly the declared arguments and types, its selection exists on the answer,
// and every public data* root field is an action.
import { describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { buildASTSchema, getNamedType, isObjectType, parse, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { DATA_ACTIONS, dataActionDocument, type DataAction } from '../../platform/data-actions.ts';
import { dataRoutes } from '../../rest-compat/routes/data.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SDL = fs.readFileSync(path.join(ROOT, 'subgraphs/data/schema.graphql'), 'utf8');
// Federation directives and scalars are not needed to read fields and arguments.
const schema = buildASTSchema(
  parse(
    `directive @link(url: String, import: [String]) repeatable on SCHEMA\ndirective @key(fields: String) repeatable on OBJECT\ndirective @inaccessible on FIELD_DEFINITION | OBJECT\n${SDL.replace(/^extend schema .*$/m, '')}`,
  ),
  { assumeValidSDL: true },
);
/** Arguments of the SDL that no REST row or step takes, and why. */
const GRAPHQL_ONLY: Record<string, string[]> = {
  // The Database step's dry run sends it through its own operation (DatabaseStepDryRun); REST bodies have no dry run.
  dataTransaction: ['rollback'],
};
const actions = Object.entries(DATA_ACTIONS) as [string, DataAction][];

function fieldOf(a: DataAction): GraphQLField<unknown, unknown> | undefined {
  const root = (a.mutation ? schema.getMutationType() : schema.getQueryType()) as GraphQLObjectType;
  return root.getFields()[a.field];
}

describe('the table of data actions', () => {
  it.each(actions)('%s: a root field of the right kind with exactly the declared arguments and types', (_name, a) => {
    const field = fieldOf(a);
    expect(field).toBeDefined();
    const declared = Object.entries(a.args).map(([n, t]) => `${n}: ${t}`);
    const sdl = field!.args
      .filter((arg) => !(GRAPHQL_ONLY[a.field] ?? []).includes(arg.name))
      .map((arg) => `${arg.name}: ${String(arg.type)}`);
    expect(declared).toEqual(sdl);
  });

  it.each(actions)('%s: the selection is fields of the answer', (_name, a) => {
    const type = getNamedType(fieldOf(a)!.type);
    expect(isObjectType(type)).toBe(true);
    // Top-level fields (a sub-selection's braces and their contents left out).
    for (const f of a.selection
      .replace(/\{[^}]*\}/g, ' ')
      .trim()
      .split(/\s+/))
      expect({ field: f, exists: f in (type as GraphQLObjectType).getFields() }).toEqual({ field: f, exists: true });
  });

  it('covers every public data* root field of the SDL', () => {
    const roots = [schema.getQueryType()!, schema.getMutationType()!]
      .flatMap((t) => Object.keys(t.getFields()))
      .filter((f) => f.startsWith('data'))
      // The schema endpoint, migrations and usage are not data actions (subgraphs/data/resolvers/schema.ts, actions.ts).
      .filter(
        (f) => !['dataSchema', 'dataSchemaDocument', 'dataMigrations', 'dataApplyMigration', 'dataUsage'].includes(f),
      );
    expect(roots.sort()).toEqual(actions.map(([, a]) => a.field).sort());
  });

  it('gives every action a REST row whose body fields are its arguments and whose operation is generated from it', () => {
    for (const [name, a] of actions) {
      const row = dataRoutes.find((r) => r.id === `data.${name}`);
      expect(row).toBeDefined();
      expect(row!.path).toBe(`/v1/${name}`);
      expect(Object.entries(row!.variables)).toEqual(Object.keys(a.args).map((f) => [f, `body.${f}`]));
      expect(row!.operation).toBe(dataActionDocument(a, `Data${a.field.slice(4)}`));
    }
  });

  it('writes documents that parse, with an alias when asked', () => {
    const doc = dataActionDocument(DATA_ACTIONS.update, 'X', 'result');
    expect(doc).toBe(
      'mutation X($table: String!, $where: JSON, $set: JSON!, $all: Boolean, $returning: JSON) { result: dataUpdate(table: $table, where: $where, set: $set, all: $all, returning: $returning) { count rows } }',
    );
    for (const [, a] of actions) expect(() => parse(dataActionDocument(a, 'Y'))).not.toThrow();
  });
});
