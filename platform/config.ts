// The one config schema: every setting Tessera reads from the environment is a row here.
// Nothing else in the code base reads process.env for configuration.
import path from 'node:path';
import { ConnectionString } from 'mongodb-connection-string-url';
import { checkOrigins, CorsRuleError, splitList } from './cors.ts';

export type ConfigRow<T> = {
  env: string;
  description: string;
  /** Printed in the README table; `undefined` means required when its condition applies, or optional. */
  default: string | undefined;
  parse: (raw: string) => T;
};

class ParseError extends Error {}

function int(min: number, max: number) {
  return (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ParseError(`expected a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ParseError(`expected a number from ${min} to ${max}, got ${n}`);
    return n;
  };
}

function optionalInt(min: number, max: number) {
  const parse = int(min, max);
  return (raw: string): number | undefined => (raw === '' ? undefined : parse(raw));
}

function oneOf<const T extends string>(...values: T[]) {
  return (raw: string): T => {
    if (!(values as string[]).includes(raw)) throw new ParseError(`expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

function url(protocols: string[]) {
  return (raw: string): string => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ParseError(`expected a URL, got "${raw}"`);
    }
    if (!protocols.includes(parsed.protocol))
      throw new ParseError(`expected a ${protocols.join(' or ')} URL, got "${parsed.protocol}"`);
    return raw.replace(/\/$/, '');
  };
}

function optionalUrl(protocols: string[]) {
  const parse = url(protocols);
  return (raw: string): string | undefined => (raw === '' ? undefined : parse(raw));
}

/** A MongoDB connection string (several hosts allowed, which a WHATWG URL is not), checked by the driver's own parser. */
function optionalMongoUrl(raw: string): string | undefined {
  if (raw === '') return undefined;
  try {
    new ConnectionString(raw);
  } catch (err) {
    throw new ParseError(`expected a mongodb:// or mongodb+srv:// connection string: ${(err as Error).message}`);
  }
  return raw;
}

/** A plan's id: lower case letters, digits and dashes (the admin API checks new plans' ids the same way). */
export function planId(raw: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,39}$/.test(raw))
    throw new ParseError(`expected a plan id (lower case letters, digits and dashes), got "${raw}"`);
  return raw;
}

/** TESSERA_CORS_ORIGINS: origins as browsers send them, or `*`. */
function corsOrigins(raw: string): string[] {
  try {
    return checkOrigins(splitList(raw), false);
  } catch (err) {
    throw new ParseError(err instanceof CorsRuleError ? err.reason : (err as Error).message);
  }
}

function text(raw: string): string {
  return raw;
}

function secret(minLength: number) {
  return (raw: string): string | undefined => {
    if (raw === '') return undefined;
    if (raw.length < minLength) throw new ParseError(`expected at least ${minLength} characters`);
    return raw;
  };
}

/** TESSERA_OPERATOR_KEY: `top_` and at least 32 more characters (empty: none). */
function operatorKey(raw: string): string | undefined {
  const value = secret(36)(raw);
  if (value !== undefined && !/^top_[A-Za-z0-9_-]{32,}$/.test(value))
    throw new ParseError(
      'expected an operator key: `top_` and 32+ letters, digits, `-` or `_` (npm run operator-key makes one)',
    );
  return value;
}

function bool(raw: string): boolean {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ParseError(`expected true or false, got "${raw}"`);
}

/** The config schema. Keep the README's configuration table in step (a test compares them). */
export const CONFIG_SCHEMA = {
  port: {
    env: 'PORT',
    default: '8080',
    parse: int(0, 65535),
    description: 'Port of the public HTTP address (front door). `0` picks a free port.',
  },
  host: {
    env: 'HOST',
    default: '127.0.0.1',
    parse: text,
    description: 'Interface the public address listens on (`0.0.0.0` to accept outside connections).',
  },
  publicUrl: {
    env: 'TESSERA_PUBLIC_URL',
    default: '',
    parse: optionalUrl(['http:', 'https:']),
    description: 'Public base URL, also the OIDC issuer. Default `http://localhost:<PORT>`.',
  },
  dataDir: {
    env: 'TESSERA_DATA_DIR',
    default: './.tessera',
    parse: text,
    description: 'Folder for the embedded database, blobs and keys (created if missing).',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    default: '',
    parse: optionalUrl(['postgres:', 'postgresql:']),
    description: 'PostgreSQL server to use. Empty: Tessera starts an embedded PostgreSQL under the data folder.',
  },
  embeddedPgPort: {
    env: 'TESSERA_EMBEDDED_PG_PORT',
    default: '0',
    parse: int(0, 65535),
    description: 'Port of the embedded PostgreSQL (`0` picks a free port).',
  },
  internalSecret: {
    env: 'TESSERA_INTERNAL_SECRET',
    default: '',
    parse: secret(32),
    description:
      'Secret (32+ characters) that signs the context the router hands subgraphs and encrypts stored secrets. Empty: generated once into the data folder.',
  },
  mode: {
    env: 'TESSERA_MODE',
    default: 'single',
    parse: oneOf('single', 'split'),
    description:
      'Read by no process: `node main.ts --role <role>` alone makes a process one role of a split deployment (over HTTP, at the routing URLs), and without `--role` everything runs in one process. Accepted (`single` or `split`) so older environments still load; the deploy kit does not set it.',
  },
  subgraphUrls: {
    env: 'TESSERA_SUBGRAPH_URLS',
    default: '',
    parse: text,
    description: 'Split mode: comma-separated `name=url` pairs overriding the routing URLs of `supergraph.yaml`.',
  },
  routerPort: {
    env: 'TESSERA_ROUTER_PORT',
    default: '4100',
    parse: int(0, 65535),
    description: 'Split mode: port of the router process (`/graphql`).',
  },
  routerHost: {
    env: 'TESSERA_ROUTER_HOST',
    default: '127.0.0.1',
    parse: text,
    description:
      'Split mode: interface the router process listens on (`0.0.0.0` when other hosts reach it, e.g. in a container).',
  },
  subgraphHost: {
    env: 'TESSERA_SUBGRAPH_HOST',
    default: '',
    parse: text,
    description:
      'Split mode: interface a subgraph process listens on (`0.0.0.0` in a container). Empty: the host of its routing URL.',
  },
  subgraphPort: {
    env: 'TESSERA_SUBGRAPH_PORT',
    default: '',
    parse: optionalInt(0, 65535),
    description:
      'Split mode: port a subgraph process listens on (behind a load balancer its routing URL may name another). Empty: the port of its routing URL.',
  },
  routerUrl: {
    env: 'TESSERA_ROUTER_URL',
    default: '',
    parse: optionalUrl(['http:', 'https:']),
    description:
      'Split mode: the router process that front doors and subgraph processes send multi-subgraph operations to. Empty: each process routes them itself (a gateway of its own).',
  },
  accessLog: {
    env: 'TESSERA_ACCESS_LOG',
    default: 'true',
    parse: bool,
    description:
      'One info-level log line per HTTP request (method, route, status, duration, request id, project) from every process.',
  },
  operatorKey: {
    env: 'TESSERA_OPERATOR_KEY',
    default: '',
    parse: operatorKey,
    description:
      'The bootstrap operator key (`top_` and 32+ more characters; `npm run operator-key` makes one): it opens the admin API (`/admin/api/v1`) as the operator named `bootstrap`. Empty: no bootstrap key (operator keys made through the admin API still work).',
  },
  defaultPlan: {
    env: 'TESSERA_DEFAULT_PLAN',
    default: 'self-hosted',
    parse: planId,
    description:
      'The plan new developer accounts start on until an operator picks one (`tessera admin plans default ID`, kept in the platform database, wins). `self-hosted` has no caps; the `free`, `pro` and `enterprise` plans are templates with SaaS-like limits.',
  },
  requestLogRows: {
    env: 'TESSERA_REQUEST_LOG_ROWS',
    default: '1000',
    parse: int(0, 100000),
    description:
      "The request log: how many of each project's newest requests are kept (older ones are pruned as new ones are written); 0 records none.",
  },
  metricsToken: {
    env: 'TESSERA_METRICS_TOKEN',
    default: '',
    parse: secret(16),
    description:
      'Bearer token `GET /metrics` requires (16+ characters). Empty: `/metrics` answers only loopback and private addresses (a Prometheus on the same machine or network; behind a reverse proxy set TESSERA_TRUST_PROXY so the caller is the client, not the proxy).',
  },
  otlpEndpoint: {
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '',
    parse: optionalUrl(['http:', 'https:']),
    description:
      'OpenTelemetry collector (OTLP over HTTP, e.g. `http://otel-collector:4318`): traces of HTTP, Fastify, GraphQL and PostgreSQL are exported there. Empty: no tracing, nothing loaded. The other standard `OTEL_*` variables apply (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`...).',
  },
  schedulerUrl: {
    env: 'TESSERA_SCHEDULER_URL',
    default: '',
    parse: optionalMongoUrl,
    description:
      'Where the job scheduler (Agenda) keeps its jobs: a MongoDB replica set (`mongodb://…`, driver options in the URL). Empty: the platform PostgreSQL.',
  },
  pgBin: {
    env: 'TESSERA_PG_BIN',
    default: '',
    parse: text,
    description:
      "Backup and restore (`npm run backup`) and online moves of a project's database: folder of `pg_dump` and `pg_restore`, of the servers' major version or newer. Empty: the newest of the PATH's and `/usr/lib/postgresql/*/bin` (a move refuses with MOVE_UNSUPPORTED when none is new enough).",
  },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parse: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    description: 'pino log level.',
  },
  accessTokenTtl: {
    env: 'TESSERA_ACCESS_TOKEN_TTL',
    default: '900',
    parse: int(1, 86400),
    description: 'Lifetime of access tokens, in seconds.',
  },
  refreshTokenTtl: {
    env: 'TESSERA_REFRESH_TOKEN_TTL',
    default: '2592000',
    parse: int(60, 31536000),
    description: 'Lifetime of refresh tokens, in seconds.',
  },
  bodyLimit: {
    env: 'TESSERA_BODY_LIMIT',
    default: '1048576',
    parse: int(1024, 1073741824),
    description: 'Largest JSON request body accepted, in bytes.',
  },
  jsonMaxDepth: {
    env: 'TESSERA_JSON_MAX_DEPTH',
    default: '64',
    parse: int(4, 1000),
    description:
      'Deepest nesting of arrays and objects accepted in any JSON input (request bodies, GraphQL variables, webhook bodies); deeper is a 400.',
  },
  maxConnections: {
    env: 'TESSERA_MAX_CONNECTIONS',
    default: '4096',
    parse: int(1, 1000000),
    description:
      'Open connections one server process serves; requests on connections past it are answered 503 with `Retry-After` (and past twice it connections are dropped).',
  },
  maxInflight: {
    env: 'TESSERA_MAX_INFLIGHT',
    default: '512',
    parse: int(1, 1000000),
    description:
      'Requests one server process works on at once; more are answered 503 with `Retry-After` at once (load shedding) instead of queueing. Health checks are never shed.',
  },
  headersTimeoutMs: {
    env: 'TESSERA_HEADERS_TIMEOUT_MS',
    default: '10000',
    parse: int(1000, 600000),
    description:
      'Milliseconds a client has to send a request line and headers (slow clients, slowloris); then 408 and the connection closes.',
  },
  requestTimeoutMs: {
    env: 'TESSERA_REQUEST_TIMEOUT_MS',
    default: '600000',
    parse: int(0, 86400000),
    description:
      'Milliseconds a client has to send a whole request, body included (`0`: no limit; raise it for very large uploads over slow links).',
  },
  idleTimeoutMs: {
    env: 'TESSERA_IDLE_TIMEOUT_MS',
    default: '60000',
    parse: int(1000, 3600000),
    description:
      'Milliseconds a connection may stay silent in either direction while a request is under way before it is closed.',
  },
  keepAliveTimeoutMs: {
    env: 'TESSERA_KEEPALIVE_TIMEOUT_MS',
    default: '5000',
    parse: int(100, 600000),
    description: 'Milliseconds an idle keep-alive connection stays open between requests.',
  },
  graphqlMaxDepth: {
    env: 'TESSERA_GRAPHQL_MAX_DEPTH',
    default: '12',
    parse: int(2, 100),
    description:
      'GraphQL: deepest field nesting of an operation (fragments included); deeper is 400 GRAPHQL_LIMIT_EXCEEDED. Introspection is exempt.',
  },
  graphqlMaxAliases: {
    env: 'TESSERA_GRAPHQL_MAX_ALIASES',
    default: '40',
    parse: int(1, 10000),
    description: 'GraphQL: most aliases in one operation (fragments counted where they are spread).',
  },
  graphqlMaxDirectives: {
    env: 'TESSERA_GRAPHQL_MAX_DIRECTIVES',
    default: '50',
    parse: int(1, 10000),
    description: 'GraphQL: most directives in one operation.',
  },
  graphqlMaxTokens: {
    env: 'TESSERA_GRAPHQL_MAX_TOKENS',
    default: '5000',
    parse: int(100, 1000000),
    description: 'GraphQL: most tokens (names, punctuation, values) in one document; parsing stops past it.',
  },
  graphqlMaxCost: {
    env: 'TESSERA_GRAPHQL_MAX_COST',
    default: '5000',
    parse: int(10, 10000000),
    description:
      'GraphQL: highest cost of an operation (GraphQL Armor: 1 per scalar, 2 per object, ×1.5 per level, fragments counted where spread: a fragment bomb costs what it would expand to).',
  },
  graphqlMaxRows: {
    env: 'TESSERA_GRAPHQL_MAX_ROWS',
    default: '10000',
    parse: int(1, 10000000),
    description:
      'GraphQL: most rows one operation may ask the data API for, summed over its actions and aliases (a find counts its `limit`, default 100; writes and SQL count 1000).',
  },
  graphqlJit: {
    env: 'TESSERA_GRAPHQL_JIT',
    default: 'true',
    parse: bool,
    description:
      'GraphQL: compile an operation run more than once (graphql-jit) instead of interpreting it on every run; `false` interprets every operation (graphql-js).',
  },
  trustProxy: {
    env: 'TESSERA_TRUST_PROXY',
    default: 'false',
    parse: bool,
    description: 'Trust `X-Forwarded-*` headers (set when behind a reverse proxy).',
  },
  dataStatementTimeoutMs: {
    env: 'TESSERA_DATA_STATEMENT_TIMEOUT_MS',
    default: '5000',
    parse: int(100, 600000),
    description: 'Data API: statement timeout of every query a project runs, in milliseconds.',
  },
  dataMaxConnections: {
    env: 'TESSERA_DATA_MAX_CONNECTIONS',
    default: '200',
    parse: int(1, 10000),
    description:
      "Data API: most project connections open at once, shared by every project (each logs in as its project's role); when spent, the connection idle the longest is closed. On a server whose `max_connections` leaves less room, it is lowered to `max_connections` − 60 (the platform's own connections and other clients) with a warning at start.",
  },
  dataPoolSize: {
    env: 'TESSERA_DATA_POOL_SIZE',
    default: '10',
    parse: int(1, 100),
    description:
      "Data API: most connections one project holds (idle ones close after 30 s); a plan's `max_database_connections` may allow fewer. When the connection budget is contended, the next free connection goes to the waiting project holding the fewest (see docs/architecture.md, fair shares).",
  },
  dataPoolWaitMs: {
    env: 'TESSERA_DATA_POOL_WAIT_MS',
    default: '5000',
    parse: int(0, 600000),
    description:
      "Data API: longest a request waits for a connection of its project when the project's connections are all busy; then 503 with `Retry-After`.",
  },
  dataProjectConnectionLimit: {
    env: 'TESSERA_DATA_PROJECT_CONNECTION_LIMIT',
    default: '50',
    parse: int(1, 10000),
    description:
      "Data API: connections one project's role may hold on its database server, all data instances and realtime listeners together (the role's `CONNECTION LIMIT`).",
  },
  dataMaxRows: {
    env: 'TESSERA_DATA_MAX_ROWS',
    default: '10000',
    parse: int(1, 10000000),
    description:
      "Data API: most rows `rawSQL` or a write's `returning` answers; a statement past it is rolled back and answered 413.",
  },
  dataMaxResultBytes: {
    env: 'TESSERA_DATA_MAX_RESULT_BYTES',
    default: '67108864',
    parse: int(1024, 2147483647),
    description:
      'Data API: most bytes (about, as JSON) one `rawSQL` answer holds; past it the statement is rolled back and answered 413.',
  },
  dataTempFileLimitKb: {
    env: 'TESSERA_DATA_TEMP_FILE_LIMIT_KB',
    default: '1048576',
    parse: int(-1, 2147483647),
    description:
      "Data API: temporary file space one statement of a project may use, in kB (`temp_file_limit` of the project's role; `-1`: none). Set only where the platform's PostgreSQL role is a superuser (the embedded server); elsewhere set `temp_file_limit` in the server's configuration.",
  },
  projectsDatabaseUrl: {
    env: 'TESSERA_PROJECTS_DATABASE_URL',
    default: '',
    parse: optionalUrl(['postgres:', 'postgresql:']),
    description:
      "Data API: the PostgreSQL server (and its maintenance database) where each project's own database is created; its role needs CREATEDB and CREATEROLE. Empty: the platform's server (`DATABASE_URL`, or the embedded one).",
  },
  realtimeMaxSubscribers: {
    env: 'TESSERA_REALTIME_MAX_SUBSCRIBERS',
    default: '1000',
    parse: int(1, 1000000),
    description: 'Realtime: most subscriptions one project may hold on one data process; more are refused with 429.',
  },
  smtpUrl: {
    env: 'TESSERA_SMTP_URL',
    default: '',
    parse: optionalUrl(['smtp:', 'smtps:']),
    description:
      "Platform SMTP server for the platform's own e-mails: end-users' password resets and verifications, developers' account mails (`smtp://user:pass@host:587`, `smtps://` for TLS); functions send only through their project's own settings. Empty: those mails are logged at info level instead of sent.",
  },
  mailFrom: {
    env: 'TESSERA_MAIL_FROM',
    default: 'Tessera <no-reply@localhost>',
    parse: text,
    description: 'Sender of platform e-mails (password reset, e-mail verification).',
  },
  storageDriver: {
    env: 'TESSERA_STORAGE_DRIVER',
    default: 'fs',
    parse: oneOf('fs', 's3'),
    description:
      'Storage: where object bytes live: `fs` (the filesystem) or `s3` (an S3-compatible bucket, see `TESSERA_S3_*`).',
  },
  storageDir: {
    env: 'TESSERA_STORAGE_DIR',
    default: '',
    parse: text,
    description: 'Storage, `fs` driver: folder of the blobs. Empty: `<TESSERA_DATA_DIR>/blobs`.',
  },
  s3Endpoint: {
    env: 'TESSERA_S3_ENDPOINT',
    default: '',
    parse: optionalUrl(['http:', 'https:']),
    description: 'Storage, `s3` driver: endpoint URL (MinIO, R2, Ceph...). Empty: AWS S3 of `TESSERA_S3_REGION`.',
  },
  s3Region: {
    env: 'TESSERA_S3_REGION',
    default: 'us-east-1',
    parse: text,
    description: 'Storage, `s3` driver: region.',
  },
  s3Bucket: {
    env: 'TESSERA_S3_BUCKET',
    default: '',
    parse: text,
    description: 'Storage, `s3` driver: bucket (must exist). Required with `TESSERA_STORAGE_DRIVER=s3`.',
  },
  s3AccessKeyId: {
    env: 'TESSERA_S3_ACCESS_KEY_ID',
    default: '',
    parse: text,
    description: "Storage, `s3` driver: access key id. Empty: the AWS SDK's default credential chain.",
  },
  s3SecretAccessKey: {
    env: 'TESSERA_S3_SECRET_ACCESS_KEY',
    default: '',
    parse: text,
    description: 'Storage, `s3` driver: secret access key.',
  },
  s3ForcePathStyle: {
    env: 'TESSERA_S3_FORCE_PATH_STYLE',
    default: 'true',
    parse: bool,
    description: 'Storage, `s3` driver: path-style bucket URLs (MinIO and most self-hosted servers need them).',
  },
  storageMaxUploadBytes: {
    env: 'TESSERA_STORAGE_MAX_UPLOAD_BYTES',
    default: '5368709120',
    parse: int(1, Number.MAX_SAFE_INTEGER),
    description: "Storage: largest single upload, in bytes, whatever the plan allows (the plan's smaller limit wins).",
  },
  storagePendingTtl: {
    env: 'TESSERA_STORAGE_PENDING_TTL',
    default: '86400',
    parse: int(1, 31536000),
    description: 'Storage: seconds an upload may stay unconfirmed before it is removed with its bytes.',
  },
  storageSweepInterval: {
    env: 'TESSERA_STORAGE_SWEEP_INTERVAL',
    default: '60',
    parse: int(1, 86400),
    description: 'Storage: seconds between two runs of the job removing unconfirmed uploads past their time.',
  },
  functionsAllowPrivateNetworks: {
    env: 'TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS',
    default: 'false',
    parse: bool,
    description:
      'Edge functions: let HTTP steps and project SMTP servers reach loopback, private and link-local addresses (refused by default).',
  },
  webhookBodyLimit: {
    env: 'TESSERA_WEBHOOK_BODY_LIMIT',
    default: '1048576',
    parse: int(1024, 67108864),
    description: 'Edge functions: largest inbound webhook body accepted, in bytes.',
  },
  signupRateLimit: {
    env: 'TESSERA_SIGNUP_RATE_LIMIT',
    default: '30',
    parse: int(1, 1000000),
    description:
      'Tenant management: developer-account sign-ups one client address may attempt per hour (counted by every tenant instance together), then 429 with `Retry-After`.',
  },
  webhookRateLimit: {
    env: 'TESSERA_WEBHOOK_RATE_LIMIT',
    default: '600',
    parse: int(1, 1000000),
    description: 'Edge functions: requests per minute one webhook receiver accepts (per process), then 429.',
  },
  corsOrigins: {
    env: 'TESSERA_CORS_ORIGINS',
    default: '',
    parse: corsOrigins,
    description:
      "CORS, platform-wide: comma-separated origins (`https://app.example.com`, or `*` for any) whose web pages may call every endpoint, on top of what each project allows (`/auth/api/v1/projects/:id/cors`). Empty: only the projects' own lists.",
  },
  corsAllowCredentials: {
    env: 'TESSERA_CORS_ALLOW_CREDENTIALS',
    default: 'false',
    parse: bool,
    description:
      'CORS, platform-wide: answer `Access-Control-Allow-Credentials: true` to the origins of `TESSERA_CORS_ORIGINS` (refused with `*`: no credentialed wildcard). Tessera itself uses no cookies.',
  },
  corsMaxAge: {
    env: 'TESSERA_CORS_MAX_AGE',
    default: '600',
    parse: int(0, 86400),
    description:
      'CORS: seconds a browser may cache a preflight answer (`Access-Control-Max-Age`) for the platform-wide origins; projects set their own.',
  },
  hookMaxDepth: {
    env: 'TESSERA_HOOK_MAX_DEPTH',
    default: '3',
    parse: int(1, 8),
    description:
      'Edge functions: how deep database hooks may nest (a hook whose function writes to a table with hooks fires them one level deeper); a write that would go deeper is refused with 409 HOOK_DEPTH_EXCEEDED.',
  },
  eventRetryBaseMs: {
    env: 'TESSERA_EVENT_RETRY_BASE_MS',
    default: '5000',
    parse: int(10, 3600000),
    description:
      'Outbound event webhooks: wait before the first retry of a failed delivery, in milliseconds; it doubles with each attempt (at most 4 hours, ±25% jitter).',
  },
  eventRetryWindow: {
    env: 'TESSERA_EVENT_RETRY_WINDOW',
    default: '86400',
    parse: int(1, 604800),
    description:
      'Outbound event webhooks: seconds a delivery is retried for (from the event, or from a manual redelivery); a delivery whose next attempt would fall later is dead-lettered.',
  },
  eventDeliveryTimeoutMs: {
    env: 'TESSERA_EVENT_DELIVERY_TIMEOUT_MS',
    default: '15000',
    parse: int(100, 60000),
    description:
      'Outbound event webhooks: milliseconds a receiver has to answer one delivery attempt (then it counts as failed and is retried).',
  },
} as const satisfies Record<string, ConfigRow<unknown>>;

type Schema = typeof CONFIG_SCHEMA;
export type Config = { -readonly [K in keyof Schema]: ReturnType<Schema[K]['parse']> } & {
  dataDirAbs: string;
  issuer: string;
};

export class ConfigError extends Error {
  problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Parses every row of the schema from `env`; throws one ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(CONFIG_SCHEMA) as [string, ConfigRow<unknown>][]) {
    const raw = env[row.env] ?? row.default ?? '';
    try {
      out[key] = row.parse(raw);
    } catch (err) {
      problems.push(`${row.env}: ${(err as Error).message}`);
    }
  }
  if (out.corsAllowCredentials === true && (out.corsOrigins as string[] | undefined)?.includes('*')) {
    problems.push(
      'TESSERA_CORS_ALLOW_CREDENTIALS: cannot be true while TESSERA_CORS_ORIGINS has the wildcard * (no credentialed wildcard: list the origins)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const config = out as Config;
  config.dataDirAbs = path.resolve(cwd, config.dataDir);
  config.issuer = config.publicUrl ?? `http://localhost:${config.port}`;
  return config;
}

let cached: Config | undefined;
/** The process-wide config, loaded once. */
export function getConfig(): Config {
  cached ??= loadConfig();
  return cached;
}
