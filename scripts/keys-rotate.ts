// Rotates the identity provider's signing keys: `npm run keys:rotate` makes a new current key (the old one
// stays published and keeps verifying); `npm run keys:rotate -- --retire <kid>` retires a previous key
// (unpublished; tokens it signed stop verifying at once); `--list` shows every key with its status.
// Works against DATABASE_URL, or the embedded PostgreSQL of TESSERA_DATA_DIR (running or not).
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../platform/config.ts';
import { createSecretBox } from '../platform/crypto.ts';
import { openSubgraphDatabase, startDatabase } from '../platform/database.ts';
import { createLogger } from '../platform/logger.ts';
import { ensureInternalSecret } from '../platform/secrets.ts';
import { identityEntities } from '../subgraphs/identity/entities/index.ts';
import { identityMigrations } from '../subgraphs/identity/migrations/index.ts';
import { createSigningKeyService, type PublicKeyView } from '../subgraphs/identity/services/signing-keys.ts';

export type KeyCommand = { action: 'rotate' } | { action: 'retire'; kid: string } | { action: 'list' };

/** The URL of a running embedded PostgreSQL of the data folder (its postmaster.pid names the port), if any. */
function runningEmbedded(config: Config): string | undefined {
  const pidFile = path.join(config.dataDirAbs, 'postgres', 'postmaster.pid');
  const passwordFile = path.join(config.dataDirAbs, 'postgres.password');
  if (!fs.existsSync(pidFile) || !fs.existsSync(passwordFile)) return undefined;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  try {
    process.kill(Number(lines[0]), 0);
  } catch {
    return undefined;
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${Number(lines[3])}/postgres`;
}

/** Runs one key command with the given environment; returns the keys afterwards. */
export async function runKeyCommand(
  command: KeyCommand,
  env: Record<string, string | undefined> = process.env,
): Promise<PublicKeyView[]> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  ensureInternalSecret(config);
  const url = config.databaseUrl ?? runningEmbedded(config);
  const embedded = url
    ? undefined
    : await startDatabase({ dataDir: config.dataDirAbs, port: config.embeddedPgPort, logger });
  const db = await openSubgraphDatabase({
    name: 'identity',
    url: url ?? embedded!.url,
    entities: identityEntities,
    migrations: identityMigrations,
    logger,
    poolMax: 2,
  });
  try {
    const keys = createSigningKeyService({
      db,
      box: createSecretBox(config.internalSecret!, 'identity:secrets'),
      config,
    });
    if (command.action === 'rotate') {
      await keys.ensureCurrent();
      await keys.rotate();
    } else if (command.action === 'retire') {
      await keys.retire(command.kid);
    }
    return await keys.all();
  } finally {
    await db.close();
    await embedded?.stop();
  }
}

function parseArgs(argv: string[]): KeyCommand {
  if (argv.includes('--list')) return { action: 'list' };
  const i = argv.indexOf('--retire');
  if (i >= 0) {
    const kid = argv[i + 1];
    if (!kid) throw new Error('--retire needs a kid (see --list)');
    return { action: 'retire', kid };
  }
  return { action: 'rotate' };
}

if (import.meta.main) {
  runKeyCommand(parseArgs(process.argv.slice(2)))
    .then((keys) => {
      for (const k of keys) console.log(`${k.kid}  ${k.status.padEnd(8)}  created ${k.createdAt.toISOString()}`);
      process.exit(0);
    })
    .catch((err: unknown) => {
      console.error((err as Error).message);
      process.exit(1);
    });
}
