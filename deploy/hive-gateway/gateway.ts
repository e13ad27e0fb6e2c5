// Hive Gateway serving Tessera's supergraph in front of split-mode subgraph processes, as an alternative to
// Tessera's own router (`node main.ts --role router`). Run from this folder after `npm ci`:
//   TESSERA_INTERNAL_SECRET=… TESSERA_SUBGRAPH_URLS=tenant=http://…/graphql,… PORT=4000 node gateway.ts
// Settings are Tessera's own (platform/config.ts): TESSERA_SUBGRAPH_URLS overrides the routing URLs of the
// committed supergraph (schema/supergraph.graphql), TESSERA_INTERNAL_SECRET signs the subgraph context, HOST/PORT
// is where it listens, DATABASE_URL (optional) lets it cache credentials until they are revoked.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { readSupergraphConfig } from '../../router/compose.ts';
import { startCredentialCache } from '../../router/credential-cache.ts';
import { tesseraAuth } from './tessera-auth.ts';

const config = loadConfig();
if (!config.internalSecret) throw new Error('TESSERA_INTERNAL_SECRET is required: the subgraphs only answer calls signed with it');
const log = createLogger(config.logLevel, 'tessera-hive-gateway');

// The routing URLs: supergraph.yaml's, overridden by TESSERA_SUBGRAPH_URLS, written into the supergraph's join__Graph entries.
const urls = new Map(readSupergraphConfig().map((e) => [e.name, e.routingUrl]));
for (const pair of config.subgraphUrls.split(',').filter(Boolean)) {
  const [name, url] = pair.split('=');
  if (name && url) urls.set(name.trim(), url.trim());
}
let supergraph = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'schema', 'supergraph.graphql'), 'utf8');
for (const [name, url] of urls) {
  const re = new RegExp(`(@join__graph\\(name: "${name}", url: )"[^"]*"`);
  if (!re.test(supergraph)) throw new Error(`no subgraph "${name}" in the supergraph`);
  supergraph = supergraph.replace(re, `$1"${url}"`);
}

const cache = config.databaseUrl ? await startCredentialCache(config.databaseUrl, log) : undefined;
const auth = tesseraAuth({ secret: config.internalSecret, subgraphUrls: urls, cache });
const gateway = createGatewayRuntime({
  supergraph,
  logging: config.logLevel === 'debug' || config.logLevel === 'trace' ? 'debug' : 'error',
  graphiql: false,
  landingPage: false,
  plugins: () => [auth.plugin],
  propagateHeaders: { fromClientToSubgraphs: auth.subgraphHeaders },
});

const server = http.createServer(gateway);
await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
const port = (server.address() as { port: number }).port;
log.info({ port }, 'hive gateway listening');
process.stdout.write(`listening ${port}\n`);
const stop = () => {
  server.close();
  void Promise.all([gateway.dispose(), cache?.stop()]).finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
