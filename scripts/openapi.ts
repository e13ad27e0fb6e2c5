// Prints the OpenAPI document Tessera serves at /openapi.json, built offline from the route table, the supergraph and
// the hand-written handlers (no database, no server): `npm run openapi > openapi.json`. The client package's types
// are generated from it (scripts/client-types.ts) and tests lint it (tests/unit/openapi.test.ts).
import fs from 'node:fs';
import { loadConfig } from '../platform/config.ts';
import { apiSchemaOf, SUPERGRAPH_FILE } from '../router/compose.ts';
import { ROUTE_TABLE } from '../rest-compat/route-table.ts';
import { RAW_HANDLERS } from '../rest-compat/handlers/index.ts';
import { HEALTH_OPENAPI } from '../rest-compat/health.ts';
import { assembleOpenApi } from '../rest-compat/openapi.ts';

/** The document, as the front door serves it. */
export function openApiDocument(): Record<string, unknown> {
  const schema = apiSchemaOf(fs.readFileSync(SUPERGRAPH_FILE, 'utf8'));
  return assembleOpenApi(ROUTE_TABLE, schema, loadConfig({}), [
    ...RAW_HANDLERS.map((m) => m.openapi ?? {}),
    HEALTH_OPENAPI,
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.stdout.write(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
