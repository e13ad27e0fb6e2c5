// How a subgraph runs a document it has parsed and validated: interpreted by graphql-js, or compiled by graphql-jit.
// graphql-js walks the document on every run (coercing its variables, collecting its fields, resolving each); for the
// platform's own small operations (the front door's /token, the router's credential checks, the REST routes'
// documents) that walk was most of their GraphQL cost (bench/RESULTS.md, session 10). graphql-jit compiles a document
// once into a function that does the same against the same schema and resolvers.
// A document is compiled when it runs the second time (`JIT_AFTER_RUNS`): compiling costs more than one run, and a
// caller sending a document once (or many documents once each) pays no more than interpretation. Compiling is bounded
// like validation is: only documents within the GraphQL limits (platform/graphql-limits.ts) get here. A document
// graphql-jit declines stays interpreted. `TESSERA_GRAPHQL_JIT=false` interprets every document.
// Where the two differ, graphql-js's behaviour is kept (platform/graphql-execution.test.ts runs the same documents
// through both):
// - graphql-jit reads a literal once, without the variables: a variable inside a list or object literal (a JSON
//   argument such as `where: { id: $id }`) would be lost. Such a document is never compiled.
// - graphql-jit 0.8.9 runs part of a string literal as code when it starts with one of its internal markers
//   (`compilable` below): a document holding a marker anywhere is never compiled. Nor is one naming `__proto__`
//   (an alias, a key of an object literal), which its generated object literals would take for a prototype.
// - its messages for variables that do not coerce are worded differently, and the REST layer names the field from
//   graphql-js's wording. A compiled run refused that way (nothing ran: no `data`) is answered by graphql-js.
import { Kind, visit, BREAK, execute, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';

/** The run of a document at which it is compiled. */
export const JIT_AFTER_RUNS = 2;
/** What every internal marker of graphql-jit starts with (see `compilable`). */
const JIT_MARKER = '__MAGIC_';
/** Operations of one document kept compiled (a document names few operations; a caller may name many). */
const MAX_OPERATIONS = 10;

/** What the executor knows about one document: kept by the caller beside the parsed document (its cache entry). */
export type Compilation = {
  runs: number;
  byOperation: Map<string, CompiledQuery | null>;
  /** Whether the document may be compiled at all (decided at its first compiling). */
  compilable?: boolean;
};

export const newCompilation = (): Compilation => ({ runs: 0, byOperation: new Map() });

/**
 * Whether graphql-jit may compile `document`: false when it would run it wrongly or run text of it as code.
 * - A variable inside a list or object literal: graphql-jit reads literals once, without the variables.
 * - A string or name holding one of graphql-jit's internal markers (`__MAGIC_DATE__<uuid>`, `__MAGIC_NAN__<uuid>`...).
 *   It writes literal arguments into the generated function as JSON and then turns each quoted marker back into
 *   `new Date(...)`, `NaN` or `Infinity` with a regular expression: a string starting with the date marker puts
 *   what follows it into the function's code unquoted. Tried on graphql-jit 0.8.9 with
 *   `echo(m: "__MAGIC_DATE__<uuid>0),a:(globalThis.pwned=42),b:(0")`: the code ran. The markers are public, so no
 *   such document is ever compiled (tests/security/input-hardening.test.ts sends one).
 */
export function compilable(document: DocumentNode): boolean {
  let ok = true;
  let depth = 0; // list and object literals entered
  const enter = () => void depth++;
  const leave = () => void depth--;
  const marked = (text: string) => text.includes(JIT_MARKER);
  visit(document, {
    ListValue: { enter, leave },
    ObjectValue: { enter, leave },
    Variable(node, _key, parent) {
      // A variable's own definition (`$id: ID`) is not a use.
      if (depth > 0 && (parent as { kind?: string } | undefined)?.kind !== Kind.VARIABLE_DEFINITION) {
        ok = false;
        return BREAK;
      }
      return undefined;
    },
    StringValue(node) {
      if (!marked(node.value)) return undefined;
      ok = false;
      return BREAK;
    },
    EnumValue(node) {
      if (!marked(node.value)) return undefined;
      ok = false;
      return BREAK;
    },
    Name(node) {
      // `__proto__` (an alias, an object literal's key) written into the function's object literals would set a
      // prototype instead of naming data.
      if (!marked(node.value) && node.value !== '__proto__') return undefined;
      ok = false;
      return BREAK;
    },
  });
  return ok;
}

export type Executor = {
  /** Runs `operationName` of `document` (parsed and validated against the executor's schema). */
  run(
    document: DocumentNode,
    compilation: Compilation,
    operationName: string | null | undefined,
    variables: Record<string, unknown>,
    contextValue: unknown,
  ): Promise<ExecutionResult> | ExecutionResult;
  /** Whether the operation runs compiled from now on (for tests). */
  isCompiled(compilation: Compilation, operationName: string | null | undefined): boolean;
};

export function createExecutor(schema: GraphQLSchema, opts: { jit: boolean }): Executor {
  const compiledOf = (
    document: DocumentNode,
    compilation: Compilation,
    operationName: string | null | undefined,
  ): CompiledQuery | null => {
    const key = operationName ?? '';
    const known = compilation.byOperation.get(key);
    if (known !== undefined) return known;
    if (!opts.jit || ++compilation.runs < JIT_AFTER_RUNS) return null;
    if (compilation.byOperation.size >= MAX_OPERATIONS) return null; // never compiled again and again
    compilation.compilable ??= compilable(document);
    let compiled: CompiledQuery | null = null;
    if (compilation.compilable)
      try {
        const made = compileQuery(schema, document, operationName ?? undefined);
        compiled = isCompiledQuery(made) ? made : null;
      } catch {
        compiled = null; // graphql-jit declined it: graphql-js runs it (and reports what is wrong with it)
      }
    compilation.byOperation.set(key, compiled);
    return compiled;
  };

  return {
    run(document, compilation, operationName, variables, contextValue) {
      const interpret = () => execute({ schema, document, variableValues: variables, contextValue, operationName });
      const compiled = compiledOf(document, compilation, operationName);
      if (!compiled) return interpret();
      const result = compiled.query(undefined, contextValue, variables);
      // Refused before anything ran (its variables): graphql-js words the answer.
      if (!isPromise(result) && result.data === undefined && result.errors) return interpret();
      return result;
    },
    isCompiled: (compilation, operationName) => !!compilation.byOperation.get(operationName ?? ''),
  };
}
