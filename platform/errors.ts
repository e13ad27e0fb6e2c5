// The one error table. Every error Tessera answers with is a row: code, HTTP status, and whether its
// message may be shown to the caller. The GraphQL formatter and the REST renderer both read it.
import { GraphQLError, type GraphQLFormattedError } from 'graphql';

export const ERROR_TABLE = {
  BAD_REQUEST: { status: 400, expose: true, message: 'The request is malformed' },
  VALIDATION_FAILED: { status: 400, expose: true, message: 'The request failed validation' },
  GRAPHQL_PARSE_FAILED: { status: 400, expose: true, message: 'The GraphQL document does not parse' },
  GRAPHQL_VALIDATION_FAILED: { status: 400, expose: true, message: 'The GraphQL document is not valid' },
  BAD_USER_INPUT: { status: 400, expose: true, message: 'A variable or argument is not valid' },
  // A GraphQL document over one of the documented limits (depth, aliases, directives, tokens, cost, rows); `details.limit` names it.
  GRAPHQL_LIMIT_EXCEEDED: { status: 400, expose: true, message: 'The GraphQL operation is over a limit' },
  UNAUTHENTICATED: { status: 401, expose: true, message: 'Authentication is required' },
  INVALID_CREDENTIALS: { status: 401, expose: true, message: 'E-mail or password is wrong' },
  INVALID_TOKEN: { status: 401, expose: true, message: 'The token is invalid, expired or revoked' },
  INVALID_API_KEY: { status: 401, expose: true, message: 'The API key is invalid' },
  MFA_REQUIRED: { status: 401, expose: true, message: 'A TOTP code is required' },
  INVALID_MFA_CODE: { status: 401, expose: true, message: 'The TOTP code is wrong or already used' },
  // A mailed link's token (a developer's password reset or e-mail change) that is unknown, expired or used: a 400, not
  // a 401, since it says nothing about the caller's own session.
  INVALID_LINK: { status: 400, expose: true, message: 'The link is invalid, expired or already used' },
  FORBIDDEN: { status: 403, expose: true, message: 'This credential may not do that' },
  // CORS: a browser request with a credential of a project that does not allow the page's origin (rest-compat/cors.ts).
  ORIGIN_NOT_ALLOWED: { status: 403, expose: true, message: 'This origin may not call with this credential' },
  // Suspended by the install's operator (admin API): data kept, every call of the project (or the account) refused.
  PROJECT_SUSPENDED: { status: 403, expose: true, message: 'The project is suspended by the operator of this install' },
  TENANT_SUSPENDED: { status: 403, expose: true, message: 'The account is suspended by the operator of this install' },
  NOT_FOUND: { status: 404, expose: true, message: 'Not found' },
  ROUTE_NOT_FOUND: { status: 404, expose: true, message: 'No such route' },
  METHOD_NOT_ALLOWED: { status: 405, expose: true, message: 'Method not allowed on this path' },
  // An Accept header naming no media type the endpoint can answer with (the realtime endpoint: JSON or SSE).
  NOT_ACCEPTABLE: { status: 406, expose: true, message: 'None of the accepted media types can be answered' },
  REQUEST_TIMEOUT: { status: 408, expose: true, message: 'The request was not received in time' },
  QUERY_TIMEOUT: { status: 408, expose: true, message: 'The statement ran past the statement timeout' },
  CONFLICT: { status: 409, expose: true, message: 'The request conflicts with the current state' },
  HOOK_DEPTH_EXCEEDED: { status: 409, expose: true, message: 'Database hooks are nested too deep' },
  EMAIL_TAKEN: { status: 409, expose: true, message: 'An account with this e-mail already exists' },
  MFA_NOT_ENROLLED: { status: 409, expose: true, message: 'MFA enrollment has not been started' },
  MFA_ALREADY_ENABLED: { status: 409, expose: true, message: 'MFA is already enabled' },
  MFA_NOT_ENABLED: { status: 409, expose: true, message: 'MFA is not enabled' },
  PLAN_LIMIT_REACHED: { status: 409, expose: true, message: 'The plan limit is reached' },
  // An operator deleting a plan a tenant is on, or the default plan for new tenants.
  PLAN_IN_USE: { status: 409, expose: true, message: 'The plan is in use' },
  SERVER_IN_USE: { status: 409, expose: true, message: 'The project server still holds projects' },
  EMAIL_NOT_CONFIGURED: {
    status: 409,
    expose: true,
    message:
      "The project has no SMTP configuration of its own (POST /edge/api/v1/email-config): its functions' mail is not sent through the platform's",
  },
  // An online move of a project's database that these servers or tools cannot do (pg_dump older than a server, an
  // extension the target lacks); `details` names what is missing. Nothing was changed.
  MOVE_UNSUPPORTED: { status: 409, expose: true, message: 'The move cannot be done with these servers or tools' },
  PAYLOAD_TOO_LARGE: { status: 413, expose: true, message: 'The request body is too large' },
  QUOTA_EXCEEDED: { status: 413, expose: true, message: "A quota of the project's plan is used up" },
  URI_TOO_LONG: { status: 414, expose: true, message: 'The request path is too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, expose: true, message: 'Unsupported content type' },
  RANGE_NOT_SATISFIABLE: { status: 416, expose: true, message: 'The requested range is outside the content' },
  // An Idempotency-Key sent again with another request (a different body) within its 24 hours.
  IDEMPOTENCY_KEY_REUSED: { status: 422, expose: true, message: 'This Idempotency-Key was used for another request' },
  RATE_LIMITED: { status: 429, expose: true, message: 'Too many requests' },
  HEADERS_TOO_LARGE: { status: 431, expose: true, message: 'The request headers are too large' },
  INTERNAL: { status: 500, expose: false, message: 'Internal error' },
  // The status is the one the hook's function chose (`details.status`, 400-599); 400 when it gave none.
  HOOK_REJECTED: { status: 400, expose: true, message: 'A database hook refused the write', statusFromDetails: true },
  FUNCTION_FAILED: { status: 502, expose: true, message: 'The function failed' },
  UPSTREAM_FAILED: { status: 502, expose: true, message: 'An outside server failed or could not be reached' },
  SERVICE_UNAVAILABLE: { status: 503, expose: true, message: 'A service is unavailable' },
  // A service (split mode) went away after the request reached it: unlike a 503, the request may have taken effect.
  SERVICE_INTERRUPTED: {
    status: 502,
    expose: true,
    message: 'A service stopped while answering; the request may or may not have taken effect',
  },
  // An online move that failed on the way (a tool or a server failed, the copy did not verify): the project stays on
  // its source, and what the move made is cleaned up.
  MOVE_FAILED: { status: 500, expose: true, message: 'The move failed; the project stays on its source server' },
  FUNCTION_TIMEOUT: { status: 504, expose: true, message: 'The function ran past its timeout' },
} as const satisfies Record<string, { status: number; expose: boolean; message: string; statusFromDetails?: boolean }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The HTTP status of an error: its row's, or for rows marked `statusFromDetails` a 400-599 `details.status`. */
export function statusFor(code: ErrorCode, details?: Record<string, unknown> | null): number {
  const row: { status: number; statusFromDetails?: boolean } = ERROR_TABLE[code];
  const s = details?.status;
  if (row.statusFromDetails && typeof s === 'number' && Number.isInteger(s) && s >= 400 && s <= 599) return s;
  return row.status;
}

/** An error whose code is a row of the error table; the only kind the domain throws on purpose. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    // The caller's mistakes (a 4xx row) carry no stack trace: no log or answer shows one, and capturing it was the
    // largest part of a refusal's cost after the socket write (a flood of 429s: ~15 of ~125 µs each, bench N1's
    // profile); a server error keeps its stack for the log.
    const limit = Error.stackTraceLimit;
    if (ERROR_TABLE[code].status < 500) Error.stackTraceLimit = 0;
    try {
      super(message ?? ERROR_TABLE[code].message, options);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
  get status(): number {
    return statusFor(this.code, this.details);
  }
}

/** Named factories: the domain says `errors.notFound('project')`, never builds statuses itself. */
export const errors = {
  badRequest: (message: string, details?: Record<string, unknown>) => new AppError('BAD_REQUEST', message, details),
  validation: (field: string, message: string) => new AppError('VALIDATION_FAILED', `${field}: ${message}`, { field }),
  unauthenticated: (message?: string) => new AppError('UNAUTHENTICATED', message),
  invalidCredentials: () => new AppError('INVALID_CREDENTIALS'),
  invalidToken: (message?: string) => new AppError('INVALID_TOKEN', message),
  invalidApiKey: () => new AppError('INVALID_API_KEY'),
  mfaRequired: () => new AppError('MFA_REQUIRED', 'MFA is enabled for this account: send totp_code'),
  invalidMfaCode: () => new AppError('INVALID_MFA_CODE'),
  forbidden: (message?: string) => new AppError('FORBIDDEN', message),
  notFound: (what: string, id?: string) =>
    new AppError(
      'NOT_FOUND',
      id ? `${what} ${id} not found` : `${what} not found`,
      id ? { resource: what, id } : { resource: what },
    ),
  conflict: (message: string, details?: Record<string, unknown>) => new AppError('CONFLICT', message, details),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError('RATE_LIMITED', `Too many requests: retry after ${retryAfterSeconds} s`, {
      retry_after: retryAfterSeconds,
    }),
  unavailable: (message: string) => new AppError('SERVICE_UNAVAILABLE', message),
  /** The project is suspended by the operator, itself or (`by: 'tenant'`) with its owner's account. */
  projectSuspended: (projectId: string, by: 'project' | 'tenant' = 'project') =>
    new AppError(
      'PROJECT_SUSPENDED',
      by === 'tenant'
        ? "The project is suspended by the operator of this install (its owner's account is suspended)"
        : 'The project is suspended by the operator of this install',
      { project_id: projectId, suspended: by },
    ),
  /** The developer account is suspended by the operator. */
  tenantSuspended: () => new AppError('TENANT_SUSPENDED', 'The account is suspended by the operator of this install'),
  /** An upload that went past its ticket's limit: the project's remaining quota, or the largest upload allowed. */
  uploadTooLarge: (ticket: { maxBytes: number; limitedBy: 'upload' | 'quota' }) =>
    ticket.limitedBy === 'quota'
      ? new AppError(
          'QUOTA_EXCEEDED',
          `The upload would take the project past its storage quota (${ticket.maxBytes} bytes left)`,
          { remaining_bytes: ticket.maxBytes },
        )
      : new AppError('PAYLOAD_TOO_LARGE', `The upload exceeds the largest upload allowed, ${ticket.maxBytes} bytes`, {
          max_bytes: ticket.maxBytes,
        }),
};

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_TABLE, code);
}

/** HTTP status for a code; unknown codes are internal errors. */
export function statusOf(code: unknown): number {
  return isErrorCode(code) ? ERROR_TABLE[code].status : 500;
}

export type ShapedError = {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  status: number;
  masked: boolean;
};

/** The code of a 4xx the web framework raised itself (body parsing, content type, URL): Fastify's `FST_ERR_*` errors. */
export function frameworkErrorCode(status: number): ErrorCode {
  switch (status) {
    case 408:
      return 'REQUEST_TIMEOUT';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 414:
      return 'URI_TOO_LONG';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 431:
      return 'HEADERS_TOO_LARGE';
    default:
      return 'BAD_REQUEST';
  }
}

/** SQLSTATEs and socket errors of a database that is away (restarting, refusing connections, out of slots). */
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery)|is not currently accepting connections|Connection ended unexpectedly/i;

/**
 * True when an error (or its cause, or the error a GraphQL error wraps) says the database could not be reached or
 * dropped the connection: the caller should retry shortly (503), nothing is wrong with the request.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 6 && e && typeof e === 'object'; i++) {
    const x = e as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; originalError?: unknown };
    if (x.name === 'ConnectionException') return true;
    if (typeof x.code === 'string' && UNAVAILABLE_CODES.has(x.code)) return true;
    if (typeof x.message === 'string' && UNAVAILABLE_MESSAGE.test(x.message)) return true;
    e = x.originalError ?? x.cause;
  }
  return false;
}

/** Reduces anything thrown to what the caller may see; `masked` says the cause must be logged. */
export function shapeError(err: unknown): ShapedError {
  if (err instanceof AppError) {
    // A row whose message may not be shown (INTERNAL) is answered with the row's own message; the cause is logged.
    if (!ERROR_TABLE[err.code].expose)
      return { code: err.code, message: ERROR_TABLE[err.code].message, status: err.status, masked: true };
    return { code: err.code, message: err.message, details: err.details, status: err.status, masked: false };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      code: 'SERVICE_UNAVAILABLE',
      message: 'The database is unavailable; retry shortly',
      details: { retry_after: 1 },
      status: 503,
      masked: false,
    };
  }
  // The web framework's own refusals (bad JSON, empty body, wrong content type, body too large, bad URL): 4xx.
  const fw = err as { code?: unknown; statusCode?: unknown; message?: unknown } | null;
  if (
    fw &&
    typeof fw === 'object' &&
    typeof fw.code === 'string' &&
    fw.code.startsWith('FST_') &&
    typeof fw.statusCode === 'number' &&
    fw.statusCode >= 400 &&
    fw.statusCode < 500
  ) {
    const code = frameworkErrorCode(fw.statusCode);
    return {
      code,
      message: typeof fw.message === 'string' && fw.message ? fw.message : ERROR_TABLE[code].message,
      status: ERROR_TABLE[code].status,
      masked: false,
    };
  }
  if (err instanceof GraphQLError) {
    const original = err.originalError;
    if (original instanceof AppError) return shapeError(original);
    const code = err.extensions?.code;
    if (isErrorCode(code) && ERROR_TABLE[code].expose) {
      const details = err.extensions?.details as Record<string, unknown> | undefined;
      return { code, message: err.message, details, status: statusFor(code, details), masked: false };
    }
    // graphql-js reports document and variable problems without a code and without an originalError.
    // Variable coercion wraps its cause (a GraphQLError or a scalar's parse error) in originalError.
    const variableProblem = err.message.startsWith('Variable "$') && !err.path;
    if (code === undefined && (!original || variableProblem)) {
      const kind: ErrorCode = err.message.startsWith('Syntax Error')
        ? 'GRAPHQL_PARSE_FAILED'
        : err.message.startsWith('Variable "$')
          ? 'BAD_USER_INPUT'
          : 'GRAPHQL_VALIDATION_FAILED';
      return { code: kind, message: err.message, status: 400, masked: false };
    }
  }
  return { code: 'INTERNAL', message: ERROR_TABLE.INTERNAL.message, status: 500, masked: true };
}

/**
 * The errors of a GraphQL answer (another subgraph's, the router's) as one error of the table: the one with the highest
 * status, with its code, message and details. A code outside the table (graphql-js's own, the gateway's
 * DOWNSTREAM_SERVICE_ERROR) or one whose message may not be shown becomes INTERNAL, keeping the message for the log
 * (shapeError masks it). The REST renderer and `callInternal` (platform/internal-operations.ts) both read answers so.
 */
export function errorOfGraphQL(errs: readonly GraphQLFormattedError[]): AppError {
  let worst = errs[0];
  let worstStatus = 0;
  for (const e of errs) {
    const code = e.extensions?.code;
    const status = isErrorCode(code)
      ? statusFor(code, e.extensions?.details as Record<string, unknown> | undefined)
      : code === 'DOWNSTREAM_SERVICE_ERROR'
        ? 502
        : 500;
    if (status > worstStatus) {
      worst = e;
      worstStatus = status;
    }
  }
  if (!worst) return new AppError('INTERNAL', 'a GraphQL answer with an empty error list');
  const code = worst.extensions?.code;
  if (!isErrorCode(code) || !ERROR_TABLE[code].expose)
    return new AppError('INTERNAL', worst.message, undefined, { cause: worst });
  return new AppError(code, worst.message, worst.extensions?.details as Record<string, unknown> | undefined);
}

/** The GraphQL side of the table: an error as it travels in a GraphQL response. */
export function toGraphQLError(err: unknown, onMasked?: (cause: unknown) => void): GraphQLError {
  const shaped = shapeError(err);
  if (shaped.masked) onMasked?.(err);
  const gqlErr = err instanceof GraphQLError ? err : undefined;
  return new GraphQLError(shaped.message, {
    path: gqlErr?.path,
    extensions: {
      code: shaped.code,
      http: { status: shaped.status },
      ...(shaped.details ? { details: shaped.details } : {}),
    },
  });
}
