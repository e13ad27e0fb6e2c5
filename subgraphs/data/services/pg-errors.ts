// PostgreSQL errors raised by a project's own statements become rows of the error table: the caller
// sent something the database refused, which is a 4xx naming the problem, never a masked 500.
import { AppError, errors } from '../../../platform/errors.ts';

type PgError = Error & {
  code?: string;
  detail?: string;
  constraint?: string;
  column?: string;
  table?: string;
  hint?: string;
  position?: string;
};

function isPgError(err: unknown): err is PgError {
  return (
    err instanceof Error && typeof (err as PgError).code === 'string' && /^[0-9A-Z]{5}$/.test((err as PgError).code!)
  );
}

/**
 * What an end user may see of a database error: PostgreSQL's `detail` quotes the values involved (the key of a
 * conflicting row, the row that failed a check), which may be rows row level security hides from that user.
 */
export function forEndUser(err: unknown): unknown {
  if (!(err instanceof AppError) || !err.details || !('detail' in err.details)) return err;
  const { detail: _hidden, ...details } = err.details;
  return new AppError(err.code, err.message, details);
}

/** Maps a PostgreSQL error to an AppError; anything else is returned unchanged. */
export function mapPgError(err: unknown): unknown {
  if (err instanceof AppError || !isPgError(err)) return err;
  const code = err.code!;
  const details: Record<string, unknown> = { sqlstate: code };
  if (err.constraint) details.constraint = err.constraint;
  if (err.column) details.column = err.column;
  if (err.table) details.table = err.table;
  if (err.detail) details.detail = err.detail;
  if (err.hint) details.hint = err.hint;
  const msg = err.message;
  switch (code) {
    case '54T01': // tessera_limits.check_rows (project template): a write would answer more rows than allowed
      return new AppError('PAYLOAD_TOO_LARGE', msg, { ...details, limit: 'TESSERA_DATA_MAX_ROWS' });
    case '23505': // unique_violation
    case '23P01': // exclusion_violation
      return errors.conflict(msg, details);
    case '23503': // foreign_key_violation
      return errors.conflict(msg, details);
    case '23502': // not_null_violation
    case '23514': // check_violation
    case '23000':
    case '23001':
      return new AppError('VALIDATION_FAILED', msg, details);
    case '42P01': // undefined_table
    case '3F000': // invalid_schema_name
      return new AppError('NOT_FOUND', msg, details);
    case '42501': // insufficient_privilege
      return errors.forbidden(msg);
    case '57014': // query_canceled: the statement timeout
      return new AppError('QUERY_TIMEOUT', 'The statement ran past the statement timeout and was cancelled', details);
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
    case '55P03': // lock_not_available
    case '2BP01': // dependent_objects_still_exist
    case '42P07': // duplicate_table
    case '42710': // duplicate_object
    case '42723': // duplicate_function
    case '42701': // duplicate_column
    case '42P06': // duplicate_schema
      return errors.conflict(msg, details);
  }
  const cls = code.slice(0, 2);
  // 22 data exceptions (bad values), 42 syntax and unknown names, 0A unsupported features,
  // 54 limits, 2F/38/39/P0 errors raised by the project's own functions, 21 cardinality, 25 transaction state.
  if (
    [
      '22',
      '42',
      '0A',
      '54',
      '2F',
      '38',
      '39',
      'P0',
      '21',
      '25',
      '0L',
      '0P',
      '44',
      '27',
      '28',
      '09',
      '0B',
      '0F',
      '0Z',
      '20',
      '24',
      '26',
      '2D',
      '34',
      '3B',
      '40',
      'HV',
    ].includes(cls)
  ) {
    return errors.badRequest(msg, details);
  }
  return err;
}
