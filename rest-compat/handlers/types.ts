// Hand-written HTTP handlers: only for what GraphQL cannot carry (OAuth/OIDC wire formats, byte streams,
// the public webhook receiver, realtime). They still reach domains only through GraphQL: the operations of
// platform/internal-operations.ts, run with `callInternal(deps, …)` over `execute`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RequestContext } from '../../platform/auth.ts';
import type { ExecutionResultJson } from '../../platform/subgraph.ts';
import type { Router } from '../../router/router.ts';

export type RawHandlerDeps = {
  config: Config;
  logger: Logger;
  router: Router;
  /** Runs an operation: straight on its subgraph when one subgraph answers it alone, else through the router. */
  execute: (query: string, variables: Record<string, unknown>, ctx: RequestContext) => Promise<ExecutionResultJson>;
  /** Authenticates the request's credentials (X-Api-Key, Bearer) into a context; throws 401 on bad ones. */
  contextOf: (req: FastifyRequest) => Promise<RequestContext>;
  /** The REST error renderer (error table → `{"error": {...}}`). */
  sendError: (reply: FastifyReply, err: unknown) => FastifyReply;
  /** Throws PROJECT_SUSPENDED while the operator has suspended the project (for anonymous calls that name one). */
  checkProject: (projectId: unknown) => Promise<void>;
};

export type RawHandlerModule = {
  name: string;
  register: (app: FastifyInstance, deps: RawHandlerDeps) => void | Promise<void>;
  /** OpenAPI path items of the handlers, merged into /openapi.json. */
  openapi?: Record<string, Record<string, Record<string, unknown>>>;
};
