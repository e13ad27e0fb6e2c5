// Names of each project's PostgreSQL objects. Roles are cluster-wide while schemas live in one
// database, so role names also carry a digest of the database name: two databases on one server
// (tests, several installations) never share a role.
import crypto from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a project id (a UUID). */
export function isProjectId(id: string): boolean {
  return UUID.test(id);
}

/** Schema names are derived from the project id: `p_` + the uuid's hex digits (a valid identifier). */
export function schemaNameOf(projectId: string): string {
  return `p_${projectId.replace(/-/g, '').toLowerCase()}`;
}

/** The project's login role: `tsr_<8 hex of sha256(database)>_<project hex>` (45 characters). */
export function roleNameOf(database: string, projectId: string): string {
  const db = crypto.createHash('sha256').update(database, 'utf8').digest('hex').slice(0, 8);
  return `tsr_${db}_${projectId.replace(/-/g, '').toLowerCase()}`;
}

/** The project's end-user role (no login): the login role switches to it for end-user requests. */
export function userRoleNameOf(database: string, projectId: string): string {
  return `${roleNameOf(database, projectId)}_u`;
}

/** Double-quotes an identifier. Callers only pass names checked against the catalog or generated here. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Quotes a string literal (for DDL that cannot take bind parameters, e.g. a role's password). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The shared schema of extensions projects may use (pgvector), on every project role's search path. */
export const EXTENSIONS_SCHEMA = 'extensions';
