// Ids of the platform's own rows: UUIDs (crypto.randomUUID, gen_random_uuid). Every domain checks an id it was
// handed with this one test before it reaches a query, so a malformed id is a 404 or a 400, never a SQL error.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a UUID in its canonical text form (8-4-4-4-12 hex digits, either case). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
