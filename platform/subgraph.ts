// The contract every subgraph fulfils, and the runtime that turns one into an executor.
// A subgraph is a factory: nothing runs on import. The router sees only `RunningSubgraph`.
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import {
  parse,
  validate,
  specifiedRules,
  type DocumentNode,
  type GraphQLSchema,
  type GraphQLFormattedError,
} from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import type { EntitySchema, MigrationObject } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { WebSocketServer } from 'ws';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { RequestContext } from './auth.ts';
import { openSubgraphDatabase, type SubgraphDatabase } from './database.ts';
import { toGraphQLError } from './errors.ts';
import { createExecutor, newCompilation, type Compilation } from './graphql-execution.ts';
import {
  graphqlLimitsOf,
  limitRules,
  parseLimited,
  rowChecksOf,
  subgraphLimitsOf,
  type RowCheck,
} from './graphql-limits.ts';
import {
  adminRefusal,
  adminScopesOf,
  currentPrincipal,
  holdsEveryAdminScope,
  publishableBlocked,
  operatorBlocked,
  operatorOnly,
  operatorOutsideAdmin,
  operatorRefusal,
  publishableRefusal,
  rootFieldsOf,
  type AdminScope,
} from './admin-scopes.ts';
import { configureBroadcasts } from './broadcast.ts';
import { ensureEventTables, startEventConsumer, type EventConsumer, type EventHandlers } from './events.ts';
import { pollMsOf, registerJobs, startJobs, type JobList } from './jobs.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';

/** What a resolver receives as its context. */
export type SubgraphContext<S> = RequestContext & { services: S; logger: Logger };

/**
 * How a subgraph asks another domain for something: an operation through the router (never an import).
 * Bound once the router exists (one-process mode) or a router over HTTP subgraphs (split mode).
 */
export type RouterClient = {
  run: (query: string, variables: Record<string, unknown>, ctx: RequestContext) => Promise<ExecutionResultJson>;
};

export type SubgraphDeps = {
  config: Config;
  db: SubgraphDatabase;
  logger: Logger;
  databaseUrl: string;
  router: RouterClient;
  /** The subgraph's job scheduler (for enqueuing its jobs); present when the definition declares `jobs`. */
  scheduler?: Scheduler;
};

/**
 * An HTTP endpoint a subgraph serves beside GraphQL under `prefix` (e.g. realtime streams, which the
 * gateway cannot carry). The front door authenticates the caller and hands over a WHATWG Request: in
 * one-process mode directly, in split mode through the subgraph's own server (signed context).
 */
export type SubgraphHttp = {
  /** Answers one request of an authenticated caller; may stream (SSE). */
  fetch: (request: Request, ctx: RequestContext) => Promise<Response>;
  /**
   * Serves WebSockets accepted at the prefix; `authenticate` turns connection params (`x-api-key`, `authorization`)
   * and the upgrade request (its `Origin`, checked against the credential's project's CORS rule at the front door)
   * into a context (in split mode the front door has done so and the params carry the signed context).
   */
  websocket?: (
    wss: WebSocketServer,
    authenticate: (params: Record<string, unknown>, request: IncomingMessage) => Promise<RequestContext>,
  ) => void;
};

/** A RouterClient whose target is set later (the router is built after the subgraphs it routes to). */
export function lateBoundRouterClient(): RouterClient & { bind: (target: RouterClient) => void } {
  let target: RouterClient | undefined;
  return {
    bind: (t) => {
      target = t;
    },
    run: (query, variables, ctx) => {
      if (!target) throw new Error('the router is not ready yet');
      return target.run(query, variables, ctx);
    },
  };
}

export type SubgraphDefinition<S> = {
  /** Name as in supergraph.yaml. */
  name: string;
  /** Path of the subgraph's schema.graphql. */
  schemaFile: URL;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  createServices: (deps: SubgraphDeps) => S | Promise<S>;
  resolvers: GraphQLResolverMap<SubgraphContext<S>>;
  /** Platform events this subgraph reacts to (platform/events.ts); consumed under the subgraph's name. */
  events?: (services: S) => EventHandlers;
  /** An HTTP endpoint beside GraphQL, mounted by the front door at `prefix` (see SubgraphHttp). */
  http?: { prefix: string; create: (services: S) => SubgraphHttp };
  /**
   * The subgraph's background jobs (platform/jobs.ts), declared one file each in its jobs/ and listed in
   * jobs/index.ts: defined before `start`, processed from just after it, stopped on close.
   */
  jobs?: JobList<S>;
  /** Other work the subgraph owns (caches following broadcasts, listeners); started after migrations. */
  start?: (services: S) => Promise<void>;
  stop?: (services: S) => Promise<void>;
};

/** Helper giving `resolvers` the right context type. */
export function defineSubgraph<S>(def: SubgraphDefinition<S>): SubgraphDefinition<S> {
  return def;
}

export type ExecutionResultJson = { data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[] };

export type HealthReport = { status: 'ok' | 'down'; database: 'ok' | 'down'; detail?: string };

/** A subgraph as the router uses it, in-process or over HTTP. */
export type SubgraphHandle = {
  name: string;
  execute: (
    query: string,
    variables: Record<string, unknown> | undefined,
    ctx: RequestContext,
    operationName?: string,
  ) => Promise<ExecutionResultJson>;
  health: () => Promise<HealthReport>;
};

export type RunningSubgraph = SubgraphHandle & {
  schema: GraphQLSchema;
  sdl: string;
  close: () => Promise<void>;
  http?: SubgraphHttp & { prefix: string };
};

/** Reads a subgraph's SDL. */
export function readSchemaFile(file: URL): string {
  return fs.readFileSync(file, 'utf8');
}

/** Opens the subgraph's database, runs its migrations, builds its schema and returns an executor. */
export async function startSubgraph<S>(
  def: SubgraphDefinition<S>,
  opts: { config: Config; databaseUrl: string; logger: Logger; router?: RouterClient },
): Promise<RunningSubgraph> {
  const logger = opts.logger.child({ subgraph: def.name });
  if (opts.config.internalSecret) configureBroadcasts(opts.config.internalSecret);
  await ensureEventTables(opts.databaseUrl);
  const db = await openSubgraphDatabase({
    name: def.name,
    url: opts.databaseUrl,
    entities: def.entities,
    migrations: def.migrations,
    logger,
  });
  const router = opts.router ?? lateBoundRouterClient();
  // Jobs: one scheduler per subgraph (its name labels the jobs' process in the logs and the queue metrics).
  const scheduler = def.jobs
    ? createScheduler({
        url: opts.config.schedulerUrl ?? opts.databaseUrl,
        name: def.name,
        logger,
        processEveryMs: pollMsOf(def.jobs as JobList<unknown>, opts.config),
      })
    : undefined;
  const services = await def.createServices({
    config: opts.config,
    db,
    logger,
    databaseUrl: opts.databaseUrl,
    router,
    scheduler,
  });
  if (scheduler && def.jobs) registerJobs(def.name, scheduler, services, def.jobs, opts.config);
  const sdl = readSchemaFile(def.schemaFile);
  const schema = buildSubgraphSchema([
    { typeDefs: parse(sdl), resolvers: def.resolvers as GraphQLResolverMap<unknown> },
  ]);
  await def.start?.(services);
  if (scheduler && def.jobs) await startJobs(scheduler, def.jobs, opts.config);
  const consumer: EventConsumer | undefined = def.events
    ? await startEventConsumer({ name: def.name, url: opts.databaseUrl, handlers: def.events(services), logger })
    : undefined;

  const limits = subgraphLimitsOf(graphqlLimitsOf(opts.config));
  // Parsing and validating is most of the cost of a small operation: cache by the document's text, with
  // the admin scopes its root fields need (platform/admin-scopes.ts), so the check costs nothing per request.
  // `unpublishable`: the first root field the publishable key may not run.
  type Prepared = {
    doc: DocumentNode;
    admin: AdminScope[];
    unpublishable?: string;
    /** Whether a root field is the operator's (OPERATOR_FIELDS), and the first one an operator key may not run. */
    operator: boolean;
    notForOperator?: string;
    rows: RowCheck;
    /** What the executor knows about it (platform/graphql-execution.ts: compiled or interpreted). */
    compilation: Compilation;
  };
  const documents = new LRUCache<string, Prepared | GraphQLFormattedError[]>({ max: 500 });
  const prepare = (query: string): Prepared | GraphQLFormattedError[] => {
    let doc = documents.get(query);
    if (doc) return doc;
    try {
      // The limits first (platform/graphql-limits.ts): each is linear, while some of graphql-js's own rules are not
      // on adversarial documents; a document over a limit is not validated further.
      const parsed = parseLimited(query, limits);
      let problems = validate(schema, parsed, limitRules(limits));
      if (problems.length === 0) problems = validate(schema, parsed, specifiedRules);
      doc =
        problems.length > 0
          ? problems.map((e) => toGraphQLError(e).toJSON())
          : {
              doc: parsed,
              admin: adminScopesOf(parsed),
              unpublishable: publishableBlocked(rootFieldsOf(parsed)),
              operator: operatorOnly(rootFieldsOf(parsed)),
              notForOperator: operatorBlocked(rootFieldsOf(parsed)),
              rows: rowChecksOf(schema, parsed, limits),
              compilation: newCompilation(),
            };
    } catch (err) {
      doc = [toGraphQLError(err).toJSON()];
    }
    documents.set(query, doc);
    return doc;
  };

  const executor = createExecutor(schema, { jit: opts.config.graphqlJit });

  const http = def.http ? { prefix: def.http.prefix, ...def.http.create(services) } : undefined;

  return {
    name: def.name,
    schema,
    sdl,
    http,
    async execute(query, variables, ctx, operationName) {
      const prepared = prepare(query);
      if (Array.isArray(prepared)) return { errors: prepared };
      const overRows = prepared.rows(operationName, variables);
      if (overRows) return { data: null, errors: [overRows.toJSON()] };
      // The publishable key runs only what a visitor may (platform/admin-scopes.ts PUBLISHABLE_FIELDS).
      if (prepared.unpublishable && ctx.principal.kind === 'publishable') {
        return { data: null, errors: [toGraphQLError(publishableRefusal(`run ${prepared.unpublishable}`)).toJSON()] };
      }
      // The operator API and the operator key open each other only (platform/admin-scopes.ts OPERATOR_FIELDS).
      if (ctx.principal.kind === 'operator' && prepared.notForOperator) {
        const refusal = operatorOutsideAdmin(`run ${prepared.notForOperator}`);
        return { data: null, errors: [toGraphQLError(refusal).toJSON()] };
      }
      if (prepared.operator) {
        const refusal = operatorRefusal(ctx.principal);
        if (refusal) return { data: null, errors: [toGraphQLError(refusal).toJSON()] };
      }
      // Admin operations: refused before anything runs unless the principal holds the grant.
      for (const scope of prepared.admin) {
        const refusal = adminRefusal(ctx.principal, scope);
        if (refusal) return { data: null, errors: [toGraphQLError(refusal).toJSON()] };
      }
      // The request's child logger is made only when something logs (most requests never do).
      let reqLogger: Logger | undefined;
      const loggerOf = () => (reqLogger ??= logger.child({ request_id: ctx.requestId }));
      const contextValue = { ...ctx, services } as SubgraphContext<S>;
      Object.defineProperty(contextValue, 'logger', { get: loggerOf, enumerable: true });
      // A principal that may not run every admin operation stays reachable for the checks a root field cannot make
      // (requireAdminScope); the secret key and the platform itself, most calls, need no context for it.
      const run = () => executor.run(prepared.doc, prepared.compilation, operationName, variables ?? {}, contextValue);
      const result = await (holdsEveryAdminScope(ctx.principal) ? run() : currentPrincipal.run(ctx.principal, run));
      if (!result.errors) return { data: result.data as Record<string, unknown> };
      return {
        data: (result.data as Record<string, unknown> | null | undefined) ?? null,
        errors: result.errors.map((e) =>
          toGraphQLError(e, (cause) => loggerOf().error({ err: cause, path: e.path }, 'masked error')).toJSON(),
        ),
      };
    },
    async health() {
      try {
        await db.ping();
        return { status: 'ok', database: 'ok' };
      } catch (err) {
        return { status: 'down', database: 'down', detail: (err as Error).message };
      }
    },
    async close() {
      await consumer?.stop();
      // No job is taken from here on (a run under way is unlocked, so another process may take it over).
      await scheduler?.stop();
      await def.stop?.(services);
      await db.close();
    },
  };
}
