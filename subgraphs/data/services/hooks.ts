// Database hooks as the data API sees them. The hooks themselves belong to the functions subgraph; this
// module asks it, through the router and its internal (`@inaccessible`) operations:
// - which (table, timing, event) of a project have hooks — cached per project, so a write to a table without
//   hooks costs one map lookup; the cache entry is dropped on the broadcast `hooks.changed` (published by the
//   functions subgraph in the transaction that changes a hook) and everything is dropped when the broadcast
//   connection resets (messages may have been missed). Every answer is also kept in the platform database
//   (`data_hook_triggers`): while the functions subgraph cannot be asked, writes go by the last answer (nothing
//   about hooks can change meanwhile: hooks change through that subgraph), so a table without hooks is never
//   blocked by it being away; only a project never asked before waits for it (503). The functions subgraph also calls `_hooksChanged` through
//   the router once the change has committed, before it answers, so the instance it reaches (the only one in
//   one-process mode) never serves a write from the old entry; other instances follow the broadcast;
// - to run the before-hooks of a write (synchronously, before its SQL), which may change or refuse it;
// - to queue the after-hooks with the committed rows, once the write has committed (the rows wait in the
//   data subgraph's outbox until then, so they are handed off at least once: see hook-outbox.ts).
// Depth: a write made by a function run at depth d fires hooks at depth d + 1; past TESSERA_HOOK_MAX_DEPTH the
// write is refused (HOOK_DEPTH_EXCEEDED), so a hook whose function writes to its own table cannot recurse forever.
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { startBroadcastListener, type BroadcastListener } from '../../../platform/broadcast.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import {
  INTERNAL_OPERATIONS,
  callInternal,
  isAnswerError,
  type HookTriggerRow,
  type InternalOperation,
} from '../../../platform/internal-operations.ts';

export type HookEvent = 'insert' | 'update' | 'delete';
export type HookPlan = { before: boolean; after: boolean };
/** What a write knows about its hooks while it runs. */
export type HookContext = {
  projectId: string;
  userId: string | null;
  depth: number;
  dryRun: boolean;
  requestId: string;
};
/** Committed rows waiting to be handed to the after-hooks. */
export type AfterWrite = { table: string; event: HookEvent; rows: Record<string, unknown>[] };

const NONE: HookPlan = { before: false, after: false };

type Triggers = Map<string, { before: Set<string>; after: Set<string> }>;
type TriggerRow = HookTriggerRow;

/** How long the last known triggers stand in, in this process, before the functions subgraph is asked again. */
const FALLBACK_TTL_MS = 5_000;

function triggersOfRows(list: TriggerRow[]): Triggers {
  const triggers: Triggers = new Map();
  for (const t of list) {
    const entry = triggers.get(t.table) ?? { before: new Set<string>(), after: new Set<string>() };
    for (const e of t.events) entry[t.timing].add(e);
    triggers.set(t.table, entry);
  }
  return triggers;
}

export type DataHooks = ReturnType<typeof createDataHooks>;

/** What the functions subgraph answered, as the writer's error: its code, but an internal error means the hooks are unavailable. */
function hookErrorOf(err: AppError): AppError {
  return err.code === 'INTERNAL' ? errors.unavailable(`Database hooks could not run: ${err.message}`) : err;
}

/** Creates the hook client of the data subgraph. */
export function createDataHooks(opts: {
  router: RouterClient;
  databaseUrl: string;
  logger: Logger;
  maxDepth: number;
  admin?: pg.Pool;
}) {
  const { router, logger, maxDepth, admin } = opts;
  const cache = new LRUCache<string, Promise<Triggers>>({ max: 10_000 });
  const fallbacks = new LRUCache<string, Triggers>({ max: 10_000, ttl: FALLBACK_TTL_MS });
  let listener: BroadcastListener | undefined;

  const unreachable = (err: unknown) =>
    errors.unavailable(`The edge functions service could not be reached for database hooks: ${(err as Error).message}`);
  /** Runs an operation of the functions subgraph; its answer's error as the writer's, unavailable when it cannot be reached. */
  const call = async <V, R>(operation: InternalOperation<V, R>, variables: V, requestId: string): Promise<R> => {
    try {
      return await callInternal(router, operation, variables, { requestId, principal: { kind: 'internal' } });
    } catch (err) {
      throw isAnswerError(err) ? hookErrorOf(err) : unreachable(err);
    }
  };

  /** The last triggers kept for the project, when the functions subgraph could not be asked (undefined: none kept). */
  const lastKnown = async (projectId: string): Promise<Triggers | undefined> => {
    const hit = fallbacks.get(projectId);
    if (hit) return hit;
    if (!admin) return undefined;
    const { rows } = await admin
      .query<{ triggers: TriggerRow[] }>('select triggers from data_hook_triggers where project_id = $1', [projectId])
      .catch(() => ({ rows: [] }));
    if (!rows[0]) return undefined;
    const triggers = triggersOfRows(rows[0].triggers);
    fallbacks.set(projectId, triggers);
    return triggers;
  };

  /** The project's triggers from the functions subgraph (`fresh`), or the last known ones while it cannot be asked. */
  const load = async (projectId: string, requestId: string): Promise<{ triggers: Triggers; fresh: boolean }> => {
    let list: TriggerRow[];
    try {
      list =
        (
          await callInternal(
            router,
            INTERNAL_OPERATIONS.hookTriggers,
            { projectId },
            { requestId, principal: { kind: 'internal' } },
          )
        )._hookTriggers ?? [];
    } catch (err) {
      // The functions subgraph's own answer stands; only when it cannot be reached do the last hooks known stand in.
      if (isAnswerError(err)) throw hookErrorOf(err);
      const known = await lastKnown(projectId);
      if (!known) throw unreachable(err);
      logger.warn(
        { project: projectId, err: (err as Error).message },
        'data: the functions subgraph cannot be asked for hooks; writes go by the last hooks known',
      );
      return { triggers: known, fresh: false };
    }
    fallbacks.delete(projectId);
    await admin
      ?.query(
        `insert into data_hook_triggers (project_id, triggers, loaded_at) values ($1, $2::jsonb, now())
         on conflict (project_id) do update set triggers = excluded.triggers, loaded_at = now()`,
        [projectId, JSON.stringify(list)],
      )
      .catch((e: Error) =>
        logger.warn({ project: projectId, err: e.message }, 'data: could not keep the hooks known of a project'),
      );
    return { triggers: triggersOfRows(list), fresh: true };
  };

  /** The project's triggers: cached while the broadcast listener runs (it is what keeps the cache right). */
  const triggersOf = async (projectId: string, requestId: string): Promise<Triggers> => {
    if (!listener) return (await load(projectId, requestId)).triggers;
    let p = cache.get(projectId);
    if (!p) {
      const loading = load(projectId, requestId);
      p = loading.then((l) => l.triggers);
      cache.set(projectId, p);
      // A failed load, or the last known triggers standing in, is not remembered: the next write asks again.
      const made = p;
      loading.then(
        (l) => {
          if (!l.fresh && cache.get(projectId) === made) cache.delete(projectId);
        },
        () => {
          if (cache.get(projectId) === made) cache.delete(projectId);
        },
      );
    }
    return await p;
  };

  /**
   * Hands one write's committed rows to its after-hooks (one attempt): answers the error, or undefined once the
   * functions subgraph has queued them. `depth` is the depth of the hooks' runs (the writer's depth + 1).
   */
  const enqueueAfter = async (
    projectId: string,
    w: AfterWrite,
    userId: string | null,
    depth: number,
    requestId: string,
  ): Promise<AppError | undefined> => {
    if (w.rows.length === 0) return undefined;
    const rows = JSON.parse(JSON.stringify(w.rows)) as unknown[];
    const res = await call(
      INTERNAL_OPERATIONS.enqueueAfterHooks,
      { projectId, table: w.table, event: w.event, rows, userId, depth },
      requestId,
    ).catch((err: AppError) => err);
    return res instanceof AppError ? res : undefined;
  };

  return {
    /** Starts listening for `hooks.changed`; until then nothing is cached. */
    async start(): Promise<void> {
      const l = await startBroadcastListener({ url: opts.databaseUrl, logger });
      l.on('hooks.changed', (payload) => {
        if (typeof payload?.projectId === 'string') cache.delete(payload.projectId);
      });
      l.onReset(() => cache.clear());
      listener = l;
    },
    async stop(): Promise<void> {
      const l = listener;
      listener = undefined;
      cache.clear();
      await l?.stop();
    },

    /** Forgets the project's hooks (told by the functions subgraph right after a change). */
    invalidate(projectId: string): void {
      cache.delete(projectId);
    },

    /**
     * Which hooks a write fires. When the hooks cannot be known the write is refused (503): a before-hook
     * may be what keeps bad rows out. Past the maximum depth a write that would fire hooks is refused.
     */
    async plan(h: HookContext, table: string, event: HookEvent): Promise<HookPlan> {
      const entry = (await triggersOf(h.projectId, h.requestId)).get(table);
      if (!entry) return NONE;
      const plan = { before: entry.before.has(event), after: entry.after.has(event) };
      if ((plan.before || plan.after) && h.depth + 1 > maxDepth) {
        throw new AppError(
          'HOOK_DEPTH_EXCEEDED',
          `This ${event} on "${table}" would fire database hooks ${h.depth + 1} levels deep; at most ${maxDepth} (TESSERA_HOOK_MAX_DEPTH)`,
          {
            table,
            event,
            depth: h.depth + 1,
            max_depth: maxDepth,
          },
        );
      }
      return plan;
    },

    /** Runs the before-hooks; answers the rows to write (as many as given). */
    async runBefore(
      h: HookContext,
      table: string,
      event: HookEvent,
      rows: unknown[],
      where: unknown,
    ): Promise<unknown[]> {
      const res = await call(
        INTERNAL_OPERATIONS.runBeforeHooks,
        {
          projectId: h.projectId,
          table,
          event,
          rows,
          where: where ?? null,
          userId: h.userId,
          depth: h.depth + 1,
          dryRun: h.dryRun,
        },
        h.requestId,
      );
      const out = res._runBeforeHooks;
      if (!Array.isArray(out) || out.length !== rows.length)
        throw errors.unavailable('Database hooks answered an unexpected shape');
      return out;
    },

    enqueueAfter,

    /**
     * Hands committed rows to the after-hooks, retrying a few times (~2 s in all); answers the writes that could
     * not be handed off (their outbox row stays for the sweeper, see hook-outbox.ts). After a write that fails
     * every attempt the rest are not tried: they wait with it, and the caller does not wait ~2 s per write.
     */
    async handOff(h: HookContext, writes: AfterWrite[]): Promise<{ left: AfterWrite[]; error?: AppError }> {
      const left: AfterWrite[] = [];
      let error: AppError | undefined;
      for (const w of writes) {
        if (error) {
          if (w.rows.length > 0) left.push(w);
          continue;
        }
        for (let attempt = 1; ; attempt++) {
          const err = await enqueueAfter(h.projectId, w, h.userId, h.depth + 1, h.requestId);
          if (!err) break;
          if (attempt >= 3) {
            left.push(w);
            error ??= err;
            break;
          }
          await new Promise((r) => setTimeout(r, 100 * 4 ** attempt));
        }
      }
      return { left, error };
    },
  };
}
