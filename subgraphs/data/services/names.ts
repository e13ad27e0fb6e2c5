// Names of each project's PostgreSQL objects. Every project has a database of its own, a login role and a
// NOLOGIN end-user role; databases and roles are cluster-wide, so their names carry a digest of the platform
// database's name (two installations, or the test suite's many platforms, share one server without clashing)
// and a keyed digest of the project id (HMAC under a key derived from the internal secret): what any role can
// read in the shared catalogs (`pg_database`, `pg_roles`) tells nothing about which project owns what.
import crypto from 'node:crypto';
import { deriveKey } from '../../../platform/crypto.ts';

/** Version of the project template's layout (schemas, functions, the outbox): a new layout gets a new template. */
export const TEMPLATE_VERSION = 1;

/** Schema names are derived from the project id: `p_` + the uuid's hex digits (a valid identifier). */
export function schemaNameOf(projectId: string): string {
  return `p_${projectId.replace(/-/g, '').toLowerCase()}`;
}

/** 8 hex digits of the SHA-256 of the platform database's name: the prefix shared by one installation's objects. */
export function installationDigest(platformDatabase: string): string {
  return crypto.createHash('sha256').update(platformDatabase, 'utf8').digest('hex').slice(0, 8);
}

/** `userRoleName`: end-users (`_u`); `anonRoleName`: the publishable key's anonymous visitors (`_a`). Both NOLOGIN. */
export type ProjectNames = {
  databaseName: string;
  roleName: string;
  userRoleName: string;
  anonRoleName: string;
  schemaName: string;
};

/** Derives the names of a project's objects; `secret` is the internal secret. */
export function projectNamesOf(secret: string, platformDatabase: string, projectId: string): ProjectNames {
  const key = deriveKey(secret, 'data:names');
  const h = crypto.createHmac('sha256', key).update(projectId.toLowerCase(), 'utf8').digest('hex').slice(0, 24);
  const d = installationDigest(platformDatabase);
  return {
    databaseName: `tsp_${d}_${h}`,
    roleName: `tsr_${d}_${h}`,
    userRoleName: `tsr_${d}_${h}_u`,
    anonRoleName: `tsr_${d}_${h}_a`,
    schemaName: schemaNameOf(projectId),
  };
}

/** The installation's project template database (`tst_<digest>_v<version>`). */
export function templateNameOf(platformDatabase: string): string {
  return `tst_${installationDigest(platformDatabase)}_v${TEMPLATE_VERSION}`;
}

/** Double-quotes an identifier. Callers only pass names checked against the catalog or generated here. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Quotes a string literal (for DDL that cannot take bind parameters, e.g. a role's password). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The schema of extensions projects may use (pgvector), on every project role's search path. */
export const EXTENSIONS_SCHEMA = 'extensions';
