// The router: the composed supergraph served by @apollo/gateway inside @apollo/server, with data
// sources that call subgraph handles (in-process executors or HTTP), plus the fast-path planner and
// credential authentication used by the front door.
import { ApolloServer, HeaderMap, type GraphQLRequest } from '@apollo/server';
import { ApolloGateway, type GraphQLDataSource } from '@apollo/gateway';
import { parse, validate, type GraphQLSchema, type GraphQLFormattedError } from 'graphql';
import type { Logger } from '../platform/logger.ts';
import type { RequestContext } from '../platform/auth.ts';
import type { ExecutionResultJson, SubgraphHandle } from '../platform/subgraph.ts';
import { shapeError, ERROR_TABLE } from '../platform/errors.ts';
import { apiSchemaOf } from './compose.ts';
import { createPlanner, type Planner } from './planner.ts';

export type Router = {
  apollo: ApolloServer<RequestContext>;
  apiSchema: GraphQLSchema;
  planner: Planner;
  handles: Map<string, SubgraphHandle>;
  /** Runs an operation through the gateway. */
  execute: (query: string, variables: Record<string, unknown> | undefined, ctx: RequestContext) => Promise<ExecutionResultJson>;
  /** Validates an operation document against the public API schema; returns the problems. */
  validateOperation: (query: string) => string[];
  stop: () => Promise<void>;
};

class HandleDataSource implements GraphQLDataSource<RequestContext> {
  readonly handle: SubgraphHandle;
  constructor(handle: SubgraphHandle) {
    this.handle = handle;
  }
  async process(options: Parameters<GraphQLDataSource<RequestContext>['process']>[0]) {
    const { request } = options;
    const ctx: RequestContext = 'incomingRequestContext' in options ? options.context : { requestId: 'gateway', principal: { kind: 'internal' } };
    const result = await this.handle.execute(request.query ?? '', request.variables as Record<string, unknown> | undefined, ctx, request.operationName ?? undefined);
    return result as Awaited<ReturnType<GraphQLDataSource['process']>>;
  }
}

/** Shapes every error leaving /graphql through the error table (unknown errors masked). */
export function formatGraphQLError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    // Errors that already carry a code of the table (from a subgraph) pass through unchanged.
    if (typeof code === 'string' && code in ERROR_TABLE) return formatted;
    const shaped = shapeError(error);
    if (shaped.masked) logger.error({ err: error }, 'masked error');
    return {
      message: shaped.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: { code: shaped.code, http: { status: shaped.status }, ...(shaped.details ? { details: shaped.details } : {}) },
    };
  };
}

/** Starts the gateway over the given subgraph handles. */
export async function createRouter(opts: { supergraphSdl: string; handles: SubgraphHandle[]; logger: Logger }): Promise<Router> {
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
  });
  await apollo.start();
  const apiSchema = apiSchemaOf(opts.supergraphSdl);
  const planner = createPlanner(opts.supergraphSdl);

  return {
    apollo,
    apiSchema,
    planner,
    handles,
    async execute(query, variables, ctx) {
      const request: GraphQLRequest = { query, variables, http: { method: 'POST', headers: new HeaderMap(), search: '', body: undefined } };
      const response = await apollo.executeOperation(request, { contextValue: ctx });
      if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by REST operations');
      return response.body.singleResult as ExecutionResultJson;
    },
    validateOperation(query) {
      try {
        return validate(apiSchema, parse(query)).map((e) => e.message);
      } catch (err) {
        return [(err as Error).message];
      }
    },
    stop: () => apollo.stop(),
  };
}
