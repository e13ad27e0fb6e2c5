// Typed errors: every failed call throws a TesseraError carrying the platform's error `code` (`NOT_FOUND`,
// `FORBIDDEN`, ... or an OAuth error such as `invalid_grant`), the HTTP `status` and the `requestId` to quote when
// asking for help (the answer's X-Request-Id).

/** An error answer of Tessera (or a network failure: status 0, code `NETWORK_ERROR`). */
export class TesseraError extends Error {
  /** `NOT_FOUND`, `VALIDATION_FAILED`, ... (platform errors) or `invalid_grant`, ... (OAuth endpoints). */
  readonly code: string;
  /** The HTTP status (0 when no answer came). */
  readonly status: number;
  /** The request id (`X-Request-Id`), when the server answered. */
  readonly requestId: string | undefined;
  /** The error's `details` (which field, which limit...). */
  readonly details: Record<string, unknown> | undefined;

  constructor(init: {
    code: string;
    status: number;
    message: string;
    requestId?: string;
    details?: Record<string, unknown>;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'TesseraError';
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
  }
}

/** Whether `err` is a TesseraError (optionally of one code). */
export function isTesseraError(err: unknown, code?: string): err is TesseraError {
  return err instanceof TesseraError && (code === undefined || err.code === code);
}

/** The TesseraError of an error answer: the platform's `{error: {code, message, details, request_id}}` or RFC 6749's `{error, error_description}`. */
export function errorOf(status: number, body: unknown, requestId: string | undefined): TesseraError {
  const b = body as
    | {
        error?: unknown;
        error_description?: unknown;
        errors?: { message?: string; extensions?: { code?: string; details?: Record<string, unknown> } }[];
      }
    | undefined;
  if (b && typeof b.error === 'object' && b.error !== null) {
    const e = b.error as { code?: unknown; message?: unknown; details?: unknown; request_id?: unknown };
    return new TesseraError({
      code: typeof e.code === 'string' ? e.code : 'ERROR',
      status,
      message: typeof e.message === 'string' ? e.message : `HTTP ${status}`,
      requestId: typeof e.request_id === 'string' ? e.request_id : requestId,
      details: e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : undefined,
    });
  }
  if (b && typeof b.error === 'string') {
    return new TesseraError({
      code: b.error,
      status,
      message: typeof b.error_description === 'string' ? b.error_description : b.error,
      requestId,
    });
  }
  if (b && Array.isArray(b.errors) && b.errors[0]) {
    const e = b.errors[0];
    return new TesseraError({
      code: e.extensions?.code ?? 'GRAPHQL_ERROR',
      status,
      message: e.message ?? 'GraphQL error',
      requestId,
      details: e.extensions?.details,
    });
  }
  return new TesseraError({
    code: status === 0 ? 'NETWORK_ERROR' : `HTTP_${status}`,
    status,
    message: typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`,
    requestId,
  });
}
