// The Parse Server peer of P1/P2 (data API): Parse Server 9 from npm, its REST API over its PostgreSQL
// adapter, on the same PostgreSQL server as Tessera (its own database). Environment: PARSE_DATABASE_URL,
// PARSE_APP_ID, PARSE_MASTER_KEY. Prints `listening <port>` once it answers.
import http from 'node:http';
import express from 'express';
import { ParseServer } from 'parse-server';

const databaseURI = process.env.PARSE_DATABASE_URL;
if (!databaseURI) throw new Error('PARSE_DATABASE_URL is required');
const masterKey = process.env.PARSE_MASTER_KEY ?? 'bench-master-key';

const app = express();
const server = http.createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;

const parse = ParseServer({
  databaseURI,
  appId: process.env.PARSE_APP_ID ?? 'bench',
  masterKey,
  maintenanceKey: `${masterKey}-maintenance`,
  masterKeyIps: ['127.0.0.1', '::1'],
  serverURL: `http://127.0.0.1:${port}/parse`,
  logLevel: 'error',
  logsFolder: null as unknown as string, // no log files
  silent: true,
  allowClientClassCreation: false,
});
await parse.start();
app.use('/parse', parse.app);
process.stdout.write(`listening ${port}\n`);
process.on('SIGTERM', () => server.close(() => void parse.handleShutdown().finally(() => process.exit(0))));
