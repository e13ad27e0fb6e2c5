#!/usr/bin/env node
// `tessera`: the command line of Tessera, built on @tessera/client. One command per file under ./commands; human
// output by default, `--json` for scripts, exit codes in ./output.ts (EXIT).
import { parseArgs } from 'node:util';
import { VERSION } from '../version.ts';
import type { Command } from './command.ts';
import type { Flags } from './context.ts';
import { CliError, describeError, EXIT, Output, type Io } from './output.ts';

// Each command's module is loaded only when it runs (a cold start pays for one command, not all, and `--version`
// for none of the client).
const COMMANDS: Record<string, () => Promise<Command>> = {
  login: async () => (await import('./commands/auth.ts')).login,
  logout: async () => (await import('./commands/auth.ts')).logout,
  whoami: async () => (await import('./commands/auth.ts')).whoami,
  account: async () => (await import('./commands/account.ts')).account,
  projects: async () => (await import('./commands/projects.ts')).projects,
  keys: async () => (await import('./commands/projects.ts')).keys,
  clients: async () => (await import('./commands/projects.ts')).clients,
  functions: async () => (await import('./commands/functions.ts')).functions,
  secrets: async () => (await import('./commands/functions.ts')).secrets,
  executions: async () => (await import('./commands/executions.ts')).executions,
  db: async () => (await import('./commands/db.ts')).db,
  gen: async () => (await import('./commands/db.ts')).gen,
  migration: async () => (await import('./commands/migration.ts')).migration,
  storage: async () => (await import('./commands/storage.ts')).storage,
  admin: async () => (await import('./commands/admin.ts')).admin,
};

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  yes: { type: 'boolean', short: 'y' },
  url: { type: 'string' },
  project: { type: 'string', short: 'p' },
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  totp: { type: 'string' },
  'recovery-code': { type: 'string' },
  'new-password': { type: 'string' },
  token: { type: 'string' },
  'keep-current': { type: 'boolean' },
  publishable: { type: 'boolean' },
  'redirect-uri': { type: 'string', multiple: true },
  public: { type: 'string' },
  scopes: { type: 'string' },
  'grant-types': { type: 'string' },
  name: { type: 'string' },
  data: { type: 'string' },
  'data-file': { type: 'string' },
  async: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'value-stdin': { type: 'boolean' },
  function: { type: 'string' },
  status: { type: 'string' },
  first: { type: 'string' },
  interval: { type: 'string' },
  count: { type: 'string' },
  timeout: { type: 'string' },
  since: { type: 'string' },
  params: { type: 'string' },
  output: { type: 'string', short: 'o' },
  recursive: { type: 'boolean', short: 'r' },
  upsert: { type: 'boolean' },
  workdir: { type: 'string' },
  schema: { type: 'boolean' },
  'local-only': { type: 'boolean' },
  // tessera admin (the operator's commands)
  'operator-key': { type: 'string' },
  limit: { type: 'string', multiple: true },
  price: { type: 'string' },
  description: { type: 'string' },
  reason: { type: 'string' },
  search: { type: 'string' },
  tenant: { type: 'string' },
  action: { type: 'string' },
  target: { type: 'string' },
  after: { type: 'string' },
  // tessera admin servers (--url is Tessera's own address: a server's is --database-url)
  'database-url': { type: 'string' },
  weight: { type: 'string' },
  state: { type: 'string' },
  // tessera admin projects move / servers drain
  to: { type: 'string' },
  wait: { type: 'boolean' },
  drain: { type: 'string' },
} as const;

async function help(): Promise<string> {
  const lines = [`tessera ${VERSION}: the command line of Tessera`, '', 'Usage:'];
  for (const load of Object.values(COMMANDS)) for (const u of (await load()).usage) lines.push(`  tessera ${u}`);
  lines.push(
    '',
    'Everywhere: --json (machine-readable output), --url URL (or TESSERA_URL), --project ID (or TESSERA_PROJECT), --yes (no questions).',
    'tessera admin takes the operator key from --operator-key or TESSERA_OPERATOR_KEY (never saved to disk).',
    'Credentials are kept in $TESSERA_CONFIG_DIR, $XDG_CONFIG_HOME/tessera or ~/.config/tessera (credentials.json, mode 0600).',
    'Exit codes: 0 ok, 2 usage, 3 not signed in or refused (401), 4 forbidden (403), 5 not found, 6 conflict, 7 other API error, 8 network, 1 anything else.',
  );
  return lines.join('\n');
}

/** Runs the CLI with `argv` (without node and the script); answers the exit code. */
export async function main(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\nRun tessera --help for usage.\n`);
    return EXIT.USAGE;
  }
  const flags = parsed.values as Flags;
  const out = new Output(io, flags.json === true);
  if (flags.version) {
    out.result({ version: VERSION }, VERSION);
    return EXIT.OK;
  }
  const [name, ...args] = parsed.positionals;
  if (!name || flags.help) {
    io.stdout(`${await help()}\n`);
    return name || flags.help ? EXIT.OK : EXIT.USAGE;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.stderr(`error: unknown command "${name}". Run tessera --help for usage.\n`);
    return EXIT.USAGE;
  }
  try {
    const [command, { createCtx }] = await Promise.all([load(), import('./context.ts')]);
    await command.run(createCtx(out, flags, env), args);
    return EXIT.OK;
  } catch (err) {
    const { code, message } = describeError(err);
    if (out.json)
      io.stderr(
        `${JSON.stringify({ error: { message, exit_code: code, ...(err instanceof CliError ? {} : pick(err)) } })}\n`,
      );
    else io.stderr(`error: ${message}\n`);
    return code;
  }
}

function pick(err: unknown): Record<string, unknown> {
  const e = err as { code?: unknown; status?: unknown; requestId?: unknown; details?: unknown };
  return { code: e.code, status: e.status, request_id: e.requestId, details: e.details };
}

const isMain = (() => {
  try {
    const me = new URL(import.meta.url).pathname;
    const argv1 = process.argv[1] ?? '';
    return argv1 === me || argv1.endsWith('/tessera') || me.endsWith(argv1);
  } catch {
    return false;
  }
})();

if (isMain) {
  const io: Io = {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    tty: process.stdout.isTTY === true,
    errTty: process.stderr.isTTY === true,
    stdin: process.stdin,
  };
  const code = await main(process.argv.slice(2), io);
  // Let stdout drain before leaving (pipes).
  process.exitCode = code;
}
