// The project's schema (`GET /v1/schema`) and its migrations (`GET, POST /v1/migrations`), as the data API answers
// them (camelCase). Read with the secret key, or a client token granted `admin:sql`.

export type SchemaColumn = {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  primaryKey: boolean;
  serial: string | null;
  identity: string | null;
  generated: string | null;
};
export type SchemaPolicy = {
  name: string;
  command: 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE' | 'ALL';
  roles: string[];
  permissive: boolean;
  using: string | null;
  withCheck: string | null;
};
export type SchemaTable = {
  name: string;
  rlsEnabled: boolean;
  rlsForced: boolean;
  rowEstimate: number | null;
  partitionKey: string | null;
  partitionOf: string | null;
  partitionBound: string | null;
  columns: SchemaColumn[];
  primaryKey: string[];
  foreignKeys: {
    name: string;
    columns: string[];
    references: { table: string; columns: string[] };
    onDelete: string;
    definition: string;
  }[];
  constraints: { name: string; type: string; definition: string }[];
  indexes: { name: string; definition: string; unique: boolean; constraint: boolean }[];
  triggers: { name: string; definition: string }[];
  policies: SchemaPolicy[];
};
export type ProjectSchema = {
  tables: SchemaTable[];
  views: { name: string; definition: string; materialized: boolean }[];
  functions: { name: string; arguments: string; definition: string }[];
  enums: { name: string; values: string[] }[];
  sequences: { name: string; definition: string }[];
  grants: { table: string; grantee: string; privileges: string[] }[];
};

/** A migration applied to the project: `checksum` is the sha256 (hex) of its file as applied. */
export type AppliedMigration = { version: string; name: string; checksum: string; appliedAt: string };
export type ApplyMigrationResult = { applied: boolean; migration: AppliedMigration };
