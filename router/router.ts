// The router: the composed supergraph served by @apollo/gateway inside @apollo/server, with data
// sources that call subgraph handles (in-process executors or HTTP), plus the fast-path planner and
// credential authentication used by the front door.
// First: switches the gateway's data collection off before it loads (see the file).
import './gateway-data-collection.ts';
import { ApolloServer, HeaderMap, type GraphQLRequest } from '@apollo/server';
import {
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloGateway, type GraphQLDataSource } from '@apollo/gateway';
import {
  GraphQLError,
  Kind,
  getOperationAST,
  getVariableValues,
  parse,
  validate,
  visit,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type GraphQLFormattedError,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import {
  rowChecksOf,
  type RowCheck,
  isTokenLimitError,
  limitError,
  limitRules,
  parseLimited,
  type GraphQLLimits,
} from '../platform/graphql-limits.ts';
import { CONFIG_SCHEMA } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { RequestContext } from '../platform/auth.ts';
import type { ExecutionResultJson, RouterClient, SubgraphHandle } from '../platform/subgraph.ts';
import { shapeError, ERROR_TABLE } from '../platform/errors.ts';
import { apiSchemaOf } from './compose.ts';
import { createPlanner, type FastPath, type Planner } from './planner.ts';
import { INTERNAL_CONTEXT_HEADER, signContext } from '../platform/auth.ts';
import { AppError, errors } from '../platform/errors.ts';
import { causeOf, neverReached } from './remote-subgraph.ts';
import { startCredentialCache, type CredentialCache } from './credential-cache.ts';

export type Router = {
  apollo: ApolloServer<RequestContext>;
  apiSchema: GraphQLSchema;
  planner: Planner;
  handles: Map<string, SubgraphHandle>;
  /** Authenticated credentials, kept until revoked (pass it to `authenticate`); caches nothing without a database URL. */
  credentials: CredentialCache;
  /** The database whose broadcasts this router follows, if any (the front door shares its request counts there). */
  broadcastUrl?: string;
  /** Runs an operation through the gateway. */
  execute: (
    query: string,
    variables: Record<string, unknown> | undefined,
    ctx: RequestContext,
  ) => Promise<ExecutionResultJson>;
  /**
   * Runs an operation the cheapest correct way: straight on its subgraph when one subgraph answers it
   * alone (planned once per document text), otherwise through the gateway — or, when a router process
   * is configured (split mode), through that process.
   */
  run: (query: string, variables: Record<string, unknown>, ctx: RequestContext) => Promise<ExecutionResultJson>;
  /** Validates an operation document against the public API schema; returns the problems. */
  validateOperation: (query: string) => string[];
  /**
   * Checks a caller's operation against the GraphQL limits before anything else reads it (tokens while parsing,
   * then depth, aliases, directives, cost and text, then the row budget with its variables): the errors, if any.
   */
  checkLimits: (
    query: string,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | undefined,
  ) => GraphQLError[];
  /**
   * A `/graphql` query that one subgraph answers alone, run straight on that subgraph (the REST routes' fast path):
   * its answer when it has no errors, otherwise null, and then the request is the gateway's. See `fastQueryOf`.
   */
  fastQuery: (
    query: string,
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    ctx: RequestContext,
  ) => Promise<ExecutionResultJson | null>;
  stop: () => Promise<void>;
};

class HandleDataSource implements GraphQLDataSource<RequestContext> {
  readonly handle: SubgraphHandle;
  constructor(handle: SubgraphHandle) {
    this.handle = handle;
  }
  async process(options: Parameters<GraphQLDataSource<RequestContext>['process']>[0]) {
    const { request } = options;
    const ctx: RequestContext =
      'incomingRequestContext' in options ? options.context : { requestId: 'gateway', principal: { kind: 'internal' } };
    const result = await this.handle.execute(
      request.query ?? '',
      request.variables as Record<string, unknown> | undefined,
      ctx,
      request.operationName ?? undefined,
    );
    return result as Awaited<ReturnType<GraphQLDataSource['process']>>;
  }
}

/** Shapes every error leaving /graphql through the error table (unknown errors masked). */
export function formatGraphQLError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    // The parser's token cap (Apollo's parseOptions) is a limit of ours, named as such.
    if (isTokenLimitError(formatted))
      return limitError('tokens', Number(/more th(?:an|at) (\d+) tokens/.exec(formatted.message)?.[1] ?? 0)).toJSON();
    // Errors that already carry a code of the table (from a subgraph) pass through unchanged.
    if (typeof code === 'string' && code in ERROR_TABLE) return formatted;
    const shaped = shapeError(error);
    if (shaped.masked) logger.error({ err: error }, 'masked error');
    return {
      message: shaped.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code: shaped.code,
        http: { status: shaped.status },
        ...(shaped.details ? { details: shaped.details } : {}),
      },
    };
  };
}

/** An operation the process cannot route to one subgraph alone: sent to the router process (split mode). */
function viaRouterProcess(remote: { url: string; secret: string }) {
  return async (
    query: string,
    variables: Record<string, unknown>,
    ctx: RequestContext,
  ): Promise<ExecutionResultJson> => {
    const res = await fetch(`${remote.url}/graphql`, {
      method: 'POST',
      redirect: 'error',
      headers: {
        'content-type': 'application/json',
        [INTERNAL_CONTEXT_HEADER]: await signContext(ctx, remote.secret),
        'x-request-id': ctx.requestId,
      },
      body: JSON.stringify({ query, variables }),
    }).catch((err: Error) => {
      // Never reached: not done (503). Lost on the way: it may have been done (SERVICE_INTERRUPTED, 502).
      if (neverReached(err)) throw errors.unavailable(`router unreachable: ${causeOf(err)}`);
      throw new AppError('SERVICE_INTERRUPTED', `the router stopped while answering: ${causeOf(err)}`);
    });
    try {
      return (await res.json()) as ExecutionResultJson;
    } catch (err) {
      throw new AppError('SERVICE_INTERRUPTED', `the router stopped while answering: ${causeOf(err)}`);
    }
  };
}

type Run = (query: string, variables: Record<string, unknown>, ctx: RequestContext) => Promise<ExecutionResultJson>;

/**
 * `run` for the operations a process sends itself (REST routes, calls between domains): one a single subgraph answers
 * alone goes straight to that subgraph (the fast path, planned once per text), any other to `rest` (the gateway, or
 * the router process).
 */
function routedRunner(planner: Planner, handles: Map<string, SubgraphHandle>, rest: Run) {
  const plans = new Map<string, FastPath | null>();
  /** The single fetch that answers `query` alone, planned once per text; null when the gateway must run it. */
  const fastPathOf = (query: string): FastPath | null => {
    let fast = plans.get(query);
    if (fast === undefined) {
      try {
        fast = planner.fastPathOf(query);
      } catch {
        fast = null; // an invalid document: let the gateway report it
      }
      if (plans.size > 5000) plans.clear();
      plans.set(query, fast);
    }
    return fast;
  };
  const runFast = async (fast: FastPath, variables: Record<string, unknown>, ctx: RequestContext) => {
    const handle = handles.get(fast.subgraph)!;
    const used: Record<string, unknown> = {};
    for (const v of fast.variableUsages) if (v in variables) used[v] = variables[v];
    return await handle.execute(fast.query, used, ctx, fast.operationName);
  };
  const run: Run = async (query, variables, ctx) => {
    const fast = fastPathOf(query);
    return fast ? await runFast(fast, variables, ctx) : await rest(query, variables, ctx);
  };
  return { run, runFast };
}

/**
 * Split mode, a subgraph process's calls to other domains: the fast path straight to the subgraph that answers, the
 * rest to the router process. No gateway of its own (only the planner: about 0.5 s of CPU to build, where a whole
 * router took 1.5 s more). Built before the subgraph starts its jobs or listens: built on first use, it held the
 * event loop for seconds in the middle of a job on a busy machine (a cron tick's lock lapsed and the job moved).
 */
export function createRouterClient(opts: {
  supergraphSdl: string;
  handles: SubgraphHandle[];
  remote: { url: string; secret: string };
}): RouterClient {
  const { run } = routedRunner(
    createPlanner(opts.supergraphSdl),
    new Map(opts.handles.map((h) => [h.name, h])),
    viaRouterProcess(opts.remote),
  );
  return { run };
}

/** Starts the gateway over the given subgraph handles. */
export async function createRouter(opts: {
  supergraphSdl: string;
  handles: SubgraphHandle[];
  logger: Logger;
  /** Split mode: the router process for operations spanning subgraphs, and the secret to sign contexts. */
  remote?: { url: string; secret: string };
  /** The database whose broadcasts invalidate cached credentials; without it credentials are not cached. */
  broadcastUrl?: string;
  /** GraphQL limits of /graphql (default: the configuration's defaults). */
  limits?: GraphQLLimits;
}): Promise<Router> {
  const limits = opts.limits ?? defaultLimits();
  const handles = new Map(opts.handles.map((h) => [h.name, h]));
  const gateway = new ApolloGateway({
    supergraphSdl: opts.supergraphSdl,
    buildService: ({ name }) => {
      const handle = handles.get(name);
      if (!handle) throw new Error(`no handle for subgraph ${name}`);
      return new HandleDataSource(handle);
    },
    logger: opts.logger.child({ component: 'gateway' }),
  });
  const apollo = new ApolloServer<RequestContext>({
    gateway,
    formatError: formatGraphQLError(opts.logger),
    includeStacktraceInErrorResponses: false,
    introspection: true,
    // The limits are checked before Apollo parses (checkLimits, from serveGraphQL); the token cap stays as a second wall.
    parseOptions: { maxTokens: limits.maxTokens },
    plugins: [
      operationGuard,
      // Nothing goes to Apollo, even with an operator's APOLLO_KEY in the environment (which would otherwise send
      // every operation's trace to Apollo Studio), and no page that loads Apollo's Sandbox from its CDN: the front
      // door serves GraphiQL from the package (rest-compat/graphiql.ts).
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();
  const credentials = await startCredentialCache(opts.broadcastUrl, opts.logger);
  const apiSchema = apiSchemaOf(opts.supergraphSdl);
  const planner = createPlanner(opts.supergraphSdl);

  const execute = async (
    query: string,
    variables: Record<string, unknown> | undefined,
    ctx: RequestContext,
  ): Promise<ExecutionResultJson> => {
    const request: GraphQLRequest = {
      query,
      variables,
      http: { method: 'POST', headers: new HeaderMap(), search: '', body: undefined },
    };
    const response = await apollo.executeOperation(request, { contextValue: ctx });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by REST operations');
    return response.body.singleResult as ExecutionResultJson;
  };

  const { run, runFast } = routedRunner(planner, handles, opts.remote ? viaRouterProcess(opts.remote) : execute);

  // `/graphql` documents the fast path may serve, by text: valid against the API schema, one query operation, no
  // introspection field (the gateway answers those itself), planned as a single fetch. null: the gateway's.
  type FastQuery = { operation: OperationDefinitionNode; fast: FastPath };
  const fastQueries = new LRUCache<string, FastQuery | false>({ max: 1000 });
  const fastQueryOf = (query: string): FastQuery | null => {
    let known = fastQueries.get(query);
    if (known === undefined) {
      known = false;
      try {
        const doc = parse(query, { maxTokens: limits.maxTokens });
        const operation = getOperationAST(doc);
        let introspects = false;
        visit(doc, {
          Field(node) {
            if (node.name.value.startsWith('__') && node.name.value !== '__typename') introspects = true;
          },
        });
        const fast = operation?.operation === 'query' && !introspects && validate(apiSchema, doc).length === 0;
        // Planned here, not through `plans`: callers' texts must not crowd out the REST routes' plans.
        const path = fast ? planner.fastPathOf(query) : null;
        if (operation && path) known = { operation, fast: path };
      } catch {
        known = false; // unparsable or unplannable: the gateway reports it
      }
      fastQueries.set(query, known);
    }
    return known || null;
  };

  // Documents that passed the limits, by text, with their row check (counted again only when a variable sets a page size).
  type Accepted = { doc: DocumentNode; rows: RowCheck };
  const accepted = new LRUCache<string, Accepted>({ max: 1000 });
  const checkLimits = (
    query: string,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | undefined,
  ): GraphQLError[] => {
    let known = accepted.get(query);
    if (!known) {
      let doc: DocumentNode;
      try {
        doc = parseLimited(query, limits);
      } catch (err) {
        // A syntax error is Apollo's to report (GRAPHQL_PARSE_FAILED); only the limits are answered here.
        const code = (err as { extensions?: { code?: unknown } }).extensions?.code;
        if (code === 'GRAPHQL_LIMIT_EXCEEDED') return [err as GraphQLError];
        return [];
      }
      const problems = validate(apiSchema, doc, limitRules(limits));
      if (problems.length > 0) return [...problems];
      known = { doc, rows: rowChecksOf(apiSchema, doc, limits) };
      accepted.set(query, known);
    }
    const rows = known.rows(operationName, variables);
    return rows ? [rows] : [];
  };

  return {
    apollo,
    apiSchema,
    planner,
    checkLimits,
    handles,
    credentials,
    broadcastUrl: opts.broadcastUrl,
    execute,
    run,
    async fastQuery(query, operationName, variables, ctx) {
      const known = fastQueryOf(query);
      if (!known || (operationName !== undefined && operationName !== known.operation.name?.value)) return null;
      // The variables as the gateway would hand them on: coerced against the public API schema (which has none of
      // the internal types, fields or values); a problem with them is the gateway's to answer.
      const coerced = getVariableValues(apiSchema, known.operation.variableDefinitions ?? [], variables ?? {});
      if (coerced.errors) return null;
      // Anything but a clean answer (errors, or the subgraph not reached) is the gateway's to answer and shape.
      const result = await runFast(known.fast, coerced.coerced, ctx).catch(() => null);
      // Only `data`, as the gateway answers: a subgraph's own `extensions` are not the caller's.
      return result && !result.errors?.length ? { data: result.data } : null;
    },
    validateOperation(query) {
      try {
        return validate(apiSchema, parse(query)).map((e) => e.message);
      } catch (err) {
        return [(err as Error).message];
      }
    },
    stop: async () => {
      await credentials.stop();
      await apollo.stop();
    },
  };
}

function defaultLimits(): GraphQLLimits {
  const n = (row: { default: string }) => Number(row.default);
  return {
    maxDepth: n(CONFIG_SCHEMA.graphqlMaxDepth),
    maxAliases: n(CONFIG_SCHEMA.graphqlMaxAliases),
    maxDirectives: n(CONFIG_SCHEMA.graphqlMaxDirectives),
    maxTokens: n(CONFIG_SCHEMA.graphqlMaxTokens),
    maxCost: n(CONFIG_SCHEMA.graphqlMaxCost),
    maxRows: n(CONFIG_SCHEMA.graphqlMaxRows),
  };
}

const badRequest = (message: string, status = 400) =>
  new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status } } });

/**
 * Requests GraphQL-over-HTTP cannot serve, refused as 400s before execution: an operationName the document
 * does not define (or several operations and none named), and subscriptions (served over SSE and WebSockets at /realtime).
 */
const operationGuard = {
  async requestDidStart() {
    return {
      async didResolveOperation(rc: {
        operation?: { operation: string } | undefined;
        request: { operationName?: string | null };
        document?: DocumentNode;
      }) {
        if (!rc.operation) {
          const count = rc.document?.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length ?? 0;
          throw rc.request.operationName
            ? badRequest(`Unknown operation named "${rc.request.operationName}"`)
            : badRequest(
                count === 0
                  ? 'The document has no operation'
                  : 'The document has several operations: send operationName',
              );
        }
        if (rc.operation.operation === 'subscription')
          throw badRequest(
            'Subscriptions are not served over HTTP POST/GET: use /realtime (server-sent events or graphql-ws)',
          );
      },
    };
  },
};
