// Shared set-up of the functions integration tests: the subgraph on a test database, a project's request context, and
// direct access to the subgraph's tables.
import crypto from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import type { RequestContext } from '../../../platform/auth.ts';
import { loadConfig } from '../../../platform/config.ts';
import { openSubgraphDatabase, type SubgraphDatabase } from '../../../platform/database.ts';
import { createLogger } from '../../../platform/logger.ts';
import { startSubgraph, type RunningSubgraph } from '../../../platform/subgraph.ts';
import { functionsSubgraph } from '../../../subgraphs/functions/index.ts';
import { functionsMigrations } from '../../../subgraphs/functions/migrations/index.ts';

/** A request of project `projectId` (of a random tenant), as the router would pass it to the subgraph. */
export function projectContext(requestId: string, projectId: string): RequestContext {
  return { requestId, principal: { kind: 'project', projectId, tenantId: crypto.randomUUID() } };
}

/** Starts an instance of the functions subgraph (with its background jobs) on `databaseUrl`. */
export async function startFunctionsSubgraph(databaseUrl: string): Promise<RunningSubgraph> {
  const config = loadConfig({ TESSERA_INTERNAL_SECRET: 'x'.repeat(40), TESSERA_DATA_DIR: os.tmpdir() });
  return await startSubgraph(functionsSubgraph, { config, databaseUrl, logger: createLogger('silent') });
}

/**
 * The functions subgraph's tables on `databaseUrl` (migrated): its ORM, for the services, and a plain client, for what
 * a test reads or plants directly; `close` ends both.
 */
export async function openFunctionsTables(
  databaseUrl: string,
): Promise<{ orm: SubgraphDatabase; client: pg.Client; close: () => Promise<void> }> {
  const orm = await openSubgraphDatabase({
    name: 'functions',
    url: databaseUrl,
    entities: [],
    migrations: functionsMigrations,
    logger: createLogger('silent'),
  });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    orm,
    client,
    close: async () => {
      await client.end();
      await orm.close();
    },
  };
}
