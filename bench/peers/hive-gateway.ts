// The Hive Gateway peer of P3: @graphql-hive/gateway-runtime serving Tessera's composed supergraph
// (schema/supergraph.graphql) over Tessera's own subgraphs reached over HTTP (split-mode subgraph processes
// started by the case). Prints `listening <port>` once it answers.
//
// Subgraph servers answer only calls carrying a context signed with the internal secret (x-tessera-context,
// platform/auth.ts). This gateway does not authenticate its callers: every subgraph call carries a context
// signed here for the one principal given in P3_PRINCIPAL (what Tessera's router hands a subgraph
// after it has authenticated the X-Api-Key).
// Env: PORT, P3_SUBGRAPH_URLS (`name=url,...`, overriding the supergraph's routing URLs), P3_PRINCIPAL (JSON),
// TESSERA_INTERNAL_SECRET.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import crypto from 'node:crypto';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { INTERNAL_CONTEXT_HEADER, signContext, type Principal } from '../../platform/auth.ts';

const secret = process.env.TESSERA_INTERNAL_SECRET;
if (!secret) throw new Error('TESSERA_INTERNAL_SECRET is required');
const principal = JSON.parse(process.env.P3_PRINCIPAL ?? 'null') as Principal | null;
if (!principal?.kind) throw new Error('P3_PRINCIPAL (a JSON principal) is required');

// The committed supergraph, with the routing URLs of the subgraphs this run started.
let supergraph = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'schema', 'supergraph.graphql'), 'utf8');
for (const pair of (process.env.P3_SUBGRAPH_URLS ?? '').split(',').filter(Boolean)) {
  const [name, url] = pair.split('=') as [string, string];
  const re = new RegExp(`(@join__graph\\(name: "${name}", url: )"[^"]*"`);
  if (!re.test(supergraph)) throw new Error(`no subgraph "${name}" in the supergraph`);
  supergraph = supergraph.replace(re, `$1"${url}"`);
}

// The signed context is valid 60 s; re-signed every 30 s, so the gateway does no cryptography per request
// (signing on every call, through WebCrypto, took about a tenth of its CPU time).
const sign = async () => await signContext({ requestId: crypto.randomUUID(), principal, ip: '127.0.0.1' }, secret);
let signed = await sign();
const refresh = setInterval(() => void sign().then((s) => (signed = s)), 30_000);

const gateway = createGatewayRuntime({
  supergraph,
  logging: 'error',
  graphiql: false,
  landingPage: false,
  propagateHeaders: {
    fromClientToSubgraphs: () => ({ [INTERNAL_CONTEXT_HEADER]: signed }),
  },
});

const server = http.createServer(gateway);
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
process.on('SIGTERM', () => {
  clearInterval(refresh);
  server.close();
  void gateway.dispose().finally(() => process.exit(0));
});
