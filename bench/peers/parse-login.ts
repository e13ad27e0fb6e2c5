// The Parse Server peer of P5: Parse Server 9 from npm on the same PostgreSQL as Tessera, mounted at
// /parse on express, listening on loopback. Prints `listening <port>` once it answers.
// Its login (POST /parse/login) checks the password with Parse's own hashing (bcrypt, cost 10: bcryptjs,
// or @node-rs/bcrypt when installed) and creates a session row.
import http from 'node:http';
import express from 'express';

// Parse sets up its file logger when it is loaded: no ./logs folder in the working directory.
process.env.PARSE_SERVER_LOGS_FOLDER ??= 'null';
const { ParseServer } = await import('parse-server');

const databaseURI = process.env.DATABASE_URL;
if (!databaseURI) throw new Error('DATABASE_URL is required');

const app = express();
const server = http.createServer(app);
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;

const parse = ParseServer({
  databaseURI,
  appId: process.env.PARSE_APP_ID ?? 'bench',
  masterKey: process.env.PARSE_MASTER_KEY ?? 'bench-master-key-0123456789abcdef',
  masterKeyIps: ['127.0.0.1', '::1'],
  maintenanceKey: process.env.PARSE_MAINTENANCE_KEY ?? 'bench-maintenance-key-0123456789abcdef',
  serverURL: `http://127.0.0.1:${port}/parse`,
  logLevel: 'error',
  silent: true,
});
await parse.start();
app.use('/parse', parse.app);
process.stdout.write(`listening ${port}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
