// Functions of a project: create, read, list, update (version bumped), delete; and the compiled form
// the engine runs (cached per id and version).
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { errors } from '../../../platform/errors.ts';
import {
  checkDefinition,
  compileSteps,
  type CompiledStep,
  type FunctionDefinition,
  type FunctionInput,
} from './definitions.ts';
import type { StepDefinition } from './steps/index.ts';
import { announceHooksChanged } from './hooks.ts';
import { announceFunctionsChanged, publishFunctionsChanged } from './receiver-cache.ts';
import { isUniqueViolation, type Sql } from './sql.ts';
import { checkPageSize } from './validation.ts';
import { decodeCursor, encodeCursor } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { textProblem } from '../../../platform/input-guard.ts';

export type EdgeFunction = FunctionDefinition & {
  id: string;
  projectId: string;
  tenantId: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** A definition's columns in the order the create and update statements list them (name … public). */
const definitionParams = (def: FunctionDefinition) => [
  def.name,
  def.slug,
  def.description,
  JSON.stringify(def.steps),
  def.timeoutMs,
  def.retries,
  def.public,
];

type Row = Record<string, unknown>;

/** A function from its row (also `to_jsonb` of a row joined into another query). */
export function toFunction(r: Row): EdgeFunction {
  return {
    id: r.id as string,
    projectId: r.project_id as string,
    tenantId: r.tenant_id as string,
    name: r.name as string,
    slug: r.slug as string,
    description: r.description as string,
    steps: r.steps as StepDefinition[],
    timeoutMs: Number(r.timeout_ms),
    retries: Number(r.retries),
    public: r.public === true,
    version: Number(r.version),
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
  };
}

export type FunctionService = ReturnType<typeof createFunctionService>;
export type Caller = { projectId: string; tenantId: string };

/** Keeps a version's definition (a replay runs the version its execution ran), in the transaction that made it. */
async function keepVersion(tx: Sql, r: Row): Promise<void> {
  await tx.run(
    'insert into edge_function_versions (function_id, version, steps, timeout_ms, retries, created_at) values (?, ?, ?::jsonb, ?, ?, ?) on conflict do nothing',
    [r.id, r.version, JSON.stringify(r.steps), r.timeout_ms, r.retries, new Date()],
  );
}

/** Creates the function service. */
export function createFunctionService({ sql }: { sql: Sql }) {
  const compiledCache = new LRUCache<string, CompiledStep[]>({ max: 1000 });
  const notFound = (id: string) => errors.notFound('function', id.slice(0, 100));

  const conflict = async (projectId: string, name: string, slug: string, exceptId: string | null) => {
    const rows = await sql.rows<{ name: string; slug: string }>(
      'select name, slug from edge_functions where project_id = ? and (name = ? or slug = ?) and id is distinct from ?',
      [projectId, name, slug, exceptId],
    );
    if (rows.some((r) => r.name === name))
      return errors.conflict(`A function named "${name}" already exists`, { field: 'name', name });
    if (rows.length > 0)
      return errors.conflict(`A function with slug "${slug}" already exists`, { field: 'slug', slug });
    return undefined;
  };

  return {
    async create(caller: Caller, input: FunctionInput): Promise<EdgeFunction> {
      const def = checkDefinition(input);
      const clash = await conflict(caller.projectId, def.name, def.slug, null);
      if (clash) throw clash;
      const now = new Date();
      try {
        const rows = await sql.tx(async (tx) => {
          const made = await tx.rows(
            `insert into edge_functions (id, project_id, tenant_id, name, slug, description, steps, timeout_ms, retries, public, version, created_at, updated_at)
             values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, 1, ?, ?) returning *`,
            [crypto.randomUUID(), caller.projectId, caller.tenantId, ...definitionParams(def), now, now],
          );
          await keepVersion(tx, made[0]!);
          return made;
        });
        return toFunction(rows[0]!);
      } catch (err) {
        if (isUniqueViolation(err))
          throw (
            (await conflict(caller.projectId, def.name, def.slug, null)) ??
            errors.conflict('The function name or slug is taken')
          );
        throw err;
      }
    },

    /** Replaces the definition; the version goes up by one. */
    async update(projectId: string, id: string, input: FunctionInput): Promise<EdgeFunction> {
      await this.get(projectId, id);
      const def = checkDefinition(input);
      const clash = await conflict(projectId, def.name, def.slug, id);
      if (clash) throw clash;
      try {
        // Cached webhook receivers of the project are dropped everywhere when this commits.
        const rows = await sql.tx(async (tx) => {
          const updated = await tx.rows(
            `update edge_functions set name = ?, slug = ?, description = ?, steps = ?::jsonb, timeout_ms = ?, retries = ?, public = ?, version = version + 1, updated_at = ?
             where id = ? and project_id = ? returning *`,
            [...definitionParams(def), new Date(), id, projectId],
          );
          if (updated[0]) {
            await keepVersion(tx, updated[0]);
            await publishFunctionsChanged(tx, projectId);
          }
          return updated;
        });
        if (!rows[0]) throw notFound(id);
        announceFunctionsChanged(projectId);
        return toFunction(rows[0]);
      } catch (err) {
        if (isUniqueViolation(err))
          throw (
            (await conflict(projectId, def.name, def.slug, id)) ?? errors.conflict('The function name or slug is taken')
          );
        throw err;
      }
    },

    async get(projectId: string, id: string): Promise<EdgeFunction> {
      if (!isUuid(id)) throw notFound(id);
      const rows = await sql.rows('select * from edge_functions where id = ? and project_id = ?', [id, projectId]);
      if (!rows[0]) throw notFound(id);
      return toFunction(rows[0]);
    },

    /** By name (invoke path, Invoke steps, webhook and cron bodies); null when unknown. */
    async findByName(projectId: string, name: string): Promise<EdgeFunction | null> {
      const rows = await sql.rows('select * from edge_functions where project_id = ? and name = ?', [projectId, name]);
      return rows[0] ? toFunction(rows[0]) : null;
    },

    /**
     * The function as it was at `version` (its steps, timeout and retries then; name and project as now); null when
     * that version was not kept (versions before issue 17's migration, other than the one current then).
     */
    async atVersion(fn: EdgeFunction, version: number): Promise<EdgeFunction | null> {
      if (version === fn.version) return fn;
      const [v] = await sql.rows(
        'select steps, timeout_ms, retries from edge_function_versions where function_id = ? and version = ?',
        [fn.id, version],
      );
      if (!v) return null;
      return {
        ...fn,
        steps: v.steps as StepDefinition[],
        timeoutMs: Number(v.timeout_ms),
        retries: Number(v.retries),
        version,
      };
    },

    /** By id, whoever's (jobs); null when gone. */
    async load(id: string): Promise<EdgeFunction | null> {
      const rows = await sql.rows('select * from edge_functions where id = ?', [id]);
      return rows[0] ? toFunction(rows[0]) : null;
    },

    /** By name, one page at a time. */
    async list(projectId: string, opts: { first?: unknown; after?: unknown }) {
      const first = checkPageSize('first', opts.first, 50, 100);
      const after =
        decodeCursor('after', opts.after, (v) =>
          typeof v === 'string' && v !== '' && !textProblem(v) ? v : undefined,
        ) ?? null;
      const rows = await sql.rows(
        `select * from edge_functions where project_id = ? and (?::text is null or name > ?) order by name limit ${first + 1}`,
        [projectId, after, after],
      );
      const items = rows.slice(0, first).map(toFunction);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > first && last ? encodeCursor(last.name) : null };
    },

    async remove(projectId: string, id: string): Promise<EdgeFunction> {
      const fn = await this.get(projectId, id);
      await sql.tx(async (tx) => {
        // Its hooks go with it (foreign key): the data API must hear of it.
        const hooks = await tx.run('delete from function_hooks where function_id = ?', [id]);
        await tx.run('delete from edge_functions where id = ? and project_id = ?', [id, projectId]);
        if (hooks > 0) await announceHooksChanged(tx, projectId);
        await publishFunctionsChanged(tx, projectId);
      });
      announceFunctionsChanged(projectId);
      return fn;
    },

    /** The steps ready to run (compiled once per version). */
    compiled(fn: EdgeFunction): CompiledStep[] {
      const key = `${fn.id}:${fn.version}`;
      let c = compiledCache.get(key);
      if (!c) {
        c = compileSteps(fn.steps, fn.retries);
        compiledCache.set(key, c);
      }
      return c;
    },
  };
}
