// The REST side of the error table: one renderer for every error the front door answers with.
import type { FastifyReply } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { errorOfGraphQL, shapeError, type ErrorCode } from '../platform/errors.ts';
import type { FastifyBaseLogger } from 'fastify';
type Logger = Pick<FastifyBaseLogger, 'error'>;
import { snakeCase } from './variables.ts';

export type ErrorBody = {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown>; request_id: string };
};

/** GraphQL talks camelCase; REST callers sent snake_case: name fields in messages their way. */
function restMessage(message: string): string {
  return message
    .replace(/(Field|field) "([A-Za-z0-9_]+)"/g, (_, w: string, f: string) => `${w} "${snakeCase(f)}"`)
    .replace(/ at "input\.([A-Za-z0-9_.[\]]+)"/g, (_, p: string) => ` at "${p.split('.').map(snakeCase).join('.')}"`);
}

/** Sends the error body for anything thrown; masked errors are logged with their cause. */
export function sendError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const shaped = shapeError(err);
  if (shaped.masked) logger.error({ err }, 'masked error');
  const body: ErrorBody = {
    error: {
      code: shaped.code,
      message: restMessage(shaped.message),
      ...(shaped.details ? { details: shaped.details } : {}),
      request_id: String(reply.request.id),
    },
  };
  const retry = shaped.details?.retry_after;
  if ((shaped.status === 429 || shaped.status === 503) && typeof retry === 'number')
    void reply.header('retry-after', String(retry));
  return reply.code(shaped.status).type('application/json').send(body);
}

/** Picks the error a REST caller sees from a GraphQL result: the one with the highest status (platform/errors.ts errorOfGraphQL). */
export function sendGraphQLErrors(
  reply: FastifyReply,
  errs: readonly GraphQLFormattedError[],
  logger: Logger,
): FastifyReply {
  return sendError(reply, errorOfGraphQL(errs), logger);
}

/** `/graphql` answers GraphQL-over-HTTP bodies, also for what fails before GraphQL runs (credentials, body, limits). */
export function isGraphQLUrl(url: string): boolean {
  return url === '/graphql' || url.startsWith('/graphql?') || url.startsWith('/graphql/');
}

/** Sends an error as a GraphQL response `{"errors": [{message, extensions: {code, http: {status}, details}}]}` with its status. */
export function sendGraphQLHttpError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const shaped = shapeError(err);
  if (shaped.masked) logger.error({ err }, 'masked error');
  const extensions = {
    code: shaped.code,
    http: { status: shaped.status },
    ...(shaped.details ? { details: shaped.details } : {}),
    request_id: String(reply.request.id),
  };
  const retry = shaped.details?.retry_after;
  if ((shaped.status === 429 || shaped.status === 503) && typeof retry === 'number')
    void reply.header('retry-after', String(retry));
  const accept = String(reply.request.headers.accept ?? '');
  const type = /application\/graphql-response\+json/i.test(accept)
    ? 'application/graphql-response+json; charset=utf-8'
    : 'application/json; charset=utf-8';
  return reply
    .code(shaped.status)
    .type(type)
    .send(JSON.stringify({ errors: [{ message: shaped.message, extensions }] }));
}

/** The renderer of the front door: GraphQL-shaped on /graphql, the REST error body everywhere else. */
export function renderError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  return isGraphQLUrl(reply.request.url) ? sendGraphQLHttpError(reply, err, logger) : sendError(reply, err, logger);
}
