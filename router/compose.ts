// Composition of the supergraph from supergraph.yaml, in Node (no rover binary), and the
// breaking-change check against the committed result.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parse, buildSchema, findBreakingChanges, lexicographicSortSchema, type BreakingChange } from 'graphql';
import { composeServices } from '@apollo/composition';
import { Supergraph } from '@apollo/federation-internals';

export type SubgraphEntry = { name: string; routingUrl: string; schemaFile: string };

export const ROOT = path.resolve(import.meta.dirname, '..');
export const SUPERGRAPH_FILE = path.join(ROOT, 'schema', 'supergraph.graphql');
export const ALLOWLIST_FILE = path.join(ROOT, 'schema', 'breaking-changes-allowed.yaml');

/** Reads the rover-style supergraph.yaml. */
export function readSupergraphConfig(file = path.join(ROOT, 'supergraph.yaml')): SubgraphEntry[] {
  const doc = parseYaml(fs.readFileSync(file, 'utf8')) as {
    subgraphs: Record<string, { routing_url: string; schema: { file: string } }>;
  };
  return Object.entries(doc.subgraphs).map(([name, s]) => ({
    name,
    routingUrl: s.routing_url,
    schemaFile: path.resolve(path.dirname(file), s.schema.file),
  }));
}

/** Composes the subgraphs' SDL into a supergraph SDL; throws with every composition error. */
export function composeSupergraph(
  entries: SubgraphEntry[],
  readSdl: (e: SubgraphEntry) => string = (e) => fs.readFileSync(e.schemaFile, 'utf8'),
): string {
  const result = composeServices(
    entries.map((e) => ({ name: e.name, url: e.routingUrl, typeDefs: parse(readSdl(e)) })),
  );
  if (result.errors) {
    throw new Error(`Composition failed:\n${result.errors.map((e) => `  - ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl;
}

/** The schema clients see (federation machinery and @inaccessible elements removed). */
export function apiSchemaOf(supergraphSdl: string) {
  const api = Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
  return lexicographicSortSchema(api);
}

/** Breaking changes between two supergraphs' API schemas. */
export function breakingChanges(before: string, after: string): BreakingChange[] {
  return findBreakingChanges(apiSchemaOf(before), apiSchemaOf(after));
}

/** Reads the allowlist: descriptions of breaking changes that are intended. */
export function readAllowlist(file = ALLOWLIST_FILE): string[] {
  if (!fs.existsSync(file)) return [];
  const doc = parseYaml(fs.readFileSync(file, 'utf8')) as { allowed?: { change: string; reason?: string }[] } | null;
  return (doc?.allowed ?? []).map((a) => a.change);
}

export { buildSchema };
