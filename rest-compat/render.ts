// The REST side of the error table: one renderer for every error the front door answers with.
import type { FastifyReply } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import { ERROR_TABLE, isErrorCode, shapeError, statusFor, type ErrorCode } from '../platform/errors.ts';
import type { FastifyBaseLogger } from 'fastify';
type Logger = Pick<FastifyBaseLogger, 'error'>;
import { snakeCase } from './variables.ts';

export type ErrorBody = { error: { code: ErrorCode; message: string; details?: Record<string, unknown>; request_id: string } };

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
    error: { code: shaped.code, message: restMessage(shaped.message), ...(shaped.details ? { details: shaped.details } : {}), request_id: String(reply.request.id) },
  };
  const retry = shaped.details?.retry_after;
  if ((shaped.status === 429 || shaped.status === 503) && typeof retry === 'number') void reply.header('retry-after', String(retry));
  return reply.code(shaped.status).type('application/json').send(body);
}

/** Picks the error a REST caller sees from a GraphQL result: the one with the highest status. */
export function sendGraphQLErrors(reply: FastifyReply, errs: readonly GraphQLFormattedError[], logger: Logger): FastifyReply {
  let worst = errs[0]!;
  let worstStatus = 0;
  for (const e of errs) {
    const code = e.extensions?.code;
    const status = isErrorCode(code) ? statusFor(code, e.extensions?.details as Record<string, unknown> | undefined) : code === 'DOWNSTREAM_SERVICE_ERROR' ? 502 : 500;
    if (status > worstStatus) {
      worst = e;
      worstStatus = status;
    }
  }
  const code = worst.extensions?.code;
  if (!isErrorCode(code) || !ERROR_TABLE[code].expose) {
    logger.error({ graphqlError: worst }, 'unexpected GraphQL error');
    return sendError(reply, new Error(worst.message), logger);
  }
  const details = worst.extensions?.details as Record<string, unknown> | undefined;
  const body: ErrorBody = { error: { code, message: restMessage(worst.message), ...(details ? { details } : {}), request_id: String(reply.request.id) } };
  const status = statusFor(code, details);
  if ((status === 429 || status === 503) && typeof details?.retry_after === 'number') void reply.header('retry-after', String(details.retry_after));
  return reply.code(status).type('application/json').send(body);
}

/** `/graphql` answers GraphQL-over-HTTP bodies, also for what fails before GraphQL runs (credentials, body, limits). */
export function isGraphQLUrl(url: string): boolean {
  return url === '/graphql' || url.startsWith('/graphql?') || url.startsWith('/graphql/');
}

/** Sends an error as a GraphQL response `{"errors": [{message, extensions: {code, http: {status}, details}}]}` with its status. */
export function sendGraphQLHttpError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  const shaped = shapeError(err);
  if (shaped.masked) logger.error({ err }, 'masked error');
  const extensions = { code: shaped.code, http: { status: shaped.status }, ...(shaped.details ? { details: shaped.details } : {}), request_id: String(reply.request.id) };
  const retry = shaped.details?.retry_after;
  if ((shaped.status === 429 || shaped.status === 503) && typeof retry === 'number') void reply.header('retry-after', String(retry));
  const accept = String(reply.request.headers.accept ?? '');
  const type = /application\/graphql-response\+json/i.test(accept) ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8';
  return reply.code(shaped.status).type(type).send(JSON.stringify({ errors: [{ message: shaped.message, extensions }] }));
}

/** The renderer of the front door: GraphQL-shaped on /graphql, the REST error body everywhere else. */
export function renderError(reply: FastifyReply, err: unknown, logger: Logger): FastifyReply {
  return isGraphQLUrl(reply.request.url) ? sendGraphQLHttpError(reply, err, logger) : sendError(reply, err, logger);
}
