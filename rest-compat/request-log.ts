// The per-project request log, recorded where requests come in: the front door knows each request's route, status,
// latency, request id and authenticated principal. A request only appends a small row to memory when it ends; rows
// are written to the platform database in batches (one INSERT a second, or sooner past a batch's size) and every
// project's newest `keep` rows are kept (older ones pruned in the same flush). Every front door writes its own rows,
// so the log holds what all instances served. What is stored: time, method, route template (never the raw path or
// query string), status, duration, request id and the credential's kind: never a body, a header, a key or a token.
// docs/architecture.md, "The request log".
import crypto from 'node:crypto';
import type pg from 'pg';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../platform/auth.ts';
import type { Logger } from '../platform/logger.ts';
import { isUuid } from '../platform/ids.ts';
import { createPgPool } from '../platform/pg-pool.ts';

/** The kind of credential a request came with, as the log records it. */
export type CredentialKind =
  'secret_key' | 'publishable_key' | 'client_token' | 'user_token' | 'tenant_token' | 'anonymous';

/** One logged request (the row written). */
export type RequestLogRow = {
  id: string;
  projectId: string;
  at: Date;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  requestId: string;
  credential: CredentialKind;
};

const PRINCIPAL = Symbol('tessera.request-log.principal');
type Noted = FastifyRequest & { [PRINCIPAL]?: Principal };

/** The log's own read is not logged: a console page showing the log would otherwise fill it with itself. */
const NOT_LOGGED = new Set(['/auth/api/v1/projects/:id/requests']);
/** Tenant routes that act on one project (`:id`). */
const TENANT_PROJECT_ROUTE = '/auth/api/v1/projects/:id';
/** Rows written per INSERT (a larger backlog is written in several). */
const BATCH = 500;
/** Rows held in memory at most while the database is slow or away; past it new rows are dropped (and counted). */
const BACKLOG_MAX = 20_000;
const FLUSH_EVERY_MS = 1_000;

/** Records the principal a request was authenticated as (called by the front door right after authenticating). */
export function notePrincipal(req: FastifyRequest, principal: Principal): void {
  (req as Noted)[PRINCIPAL] = principal;
}

/** The kind of a principal, or undefined for the platform's own calls. */
export function credentialKindOf(p: Principal): CredentialKind | undefined {
  switch (p.kind) {
    case 'project':
      return p.clientId ? 'client_token' : 'secret_key';
    case 'publishable':
      return 'publishable_key';
    case 'user':
      return 'user_token';
    case 'tenant':
      return 'tenant_token';
    case 'anonymous':
      return 'anonymous';
    case 'internal':
      return undefined;
  }
}

/**
 * The project a finished request belongs to, and its credential kind; undefined when it belongs to none. A key or an
 * end-user token names its project. A tenant token acting on `/auth/api/v1/projects/:id...` counts for that project only
 * when it succeeded (status below 400): a failure may be another tenant probing an id it does not own, whose requests
 * must neither show in nor push rows out of the owner's log. An anonymous request counts for the project named in its
 * path (`:project_id`: the public webhook receivers), which the insert checks exists.
 */
export function attributionOf(
  route: string,
  params: unknown,
  status: number,
  principal: Principal | undefined,
): { projectId: string; credential: CredentialKind } | undefined {
  if (NOT_LOGGED.has(route)) return undefined;
  const p = principal ?? { kind: 'anonymous' };
  const credential = credentialKindOf(p);
  if (!credential) return undefined;
  if ('projectId' in p) return { projectId: p.projectId, credential };
  const named = (params ?? {}) as Record<string, unknown>;
  if (p.kind === 'tenant') {
    const id = named.id;
    if (status < 400 && (route === TENANT_PROJECT_ROUTE || route.startsWith(`${TENANT_PROJECT_ROUTE}/`)) && isUuid(id))
      return { projectId: id as string, credential };
    return undefined;
  }
  const id = named.project_id;
  return isUuid(id) ? { projectId: id as string, credential } : undefined;
}

export type RequestLog = {
  /** Writes what is held now (tests, shutdown). */
  flush: () => Promise<void>;
  /** Rows dropped because the backlog was full. */
  dropped: () => number;
  stop: () => Promise<void>;
};

const INSERT = `insert into request_log (id, project_id, at, method, route, status, duration_ms, request_id, credential)
  select u.* from unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::smallint[], $7::real[], $8::text[], $9::text[])
    as u(id, project_id, at, method, route, status, duration_ms, request_id, credential)
  where exists (select 1 from projects p where p.id = u.project_id)`;

// Every project of the batch keeps its newest `keep` rows: the first row past them is found through the (project_id, at,
// id) index and everything older goes.
const PRUNE = `delete from request_log r using (
    select c.project_id, c.at, c.id from unnest($1::uuid[]) as p(project_id)
    cross join lateral (
      select l.project_id, l.at, l.id from request_log l where l.project_id = p.project_id
      order by l.at desc, l.id desc offset $2 limit 1
    ) c
  ) cut
  where r.project_id = cut.project_id and (r.at, r.id) <= (cut.at, cut.id)`;

/**
 * Starts recording the requests of `app` into the request log of the platform database at `url`. With `keep` 0 (or
 * no database) nothing is recorded.
 */
export function startRequestLog(
  app: FastifyInstance,
  opts: { url?: string; keep: number; logger: Logger; flushEveryMs?: number },
): RequestLog {
  let dropped = 0;
  if (!opts.url || opts.keep <= 0) return { flush: async () => {}, dropped: () => dropped, stop: async () => {} };
  const { keep, logger } = opts;
  const pool: pg.Pool = createPgPool(
    { connectionString: opts.url, max: 1, application_name: 'tessera-request-log' },
    logger,
    'request log',
  );
  let held: RequestLogRow[] = [];
  let writing: Promise<void> | undefined;

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const who = attributionOf(route, req.params, reply.statusCode, (req as Noted)[PRINCIPAL]);
    if (who) {
      if (held.length >= BACKLOG_MAX) dropped++;
      else {
        held.push({
          id: crypto.randomUUID(),
          projectId: who.projectId,
          at: new Date(),
          method: req.method,
          route,
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
          requestId: String(req.id),
          credential: who.credential,
        });
        if (held.length >= BATCH && !writing) void flush();
      }
    }
    done();
  });

  async function write(rows: RequestLogRow[]): Promise<void> {
    await pool.query(INSERT, [
      rows.map((r) => r.id),
      rows.map((r) => r.projectId),
      rows.map((r) => r.at),
      rows.map((r) => r.method),
      rows.map((r) => r.route),
      rows.map((r) => r.status),
      rows.map((r) => r.durationMs),
      rows.map((r) => r.requestId),
      rows.map((r) => r.credential),
    ]);
  }

  /** Writes the held rows in batches, then prunes the projects they belong to; one flush at a time. */
  async function flush(): Promise<void> {
    while (writing) await writing;
    if (held.length === 0) return;
    const rows = held;
    held = [];
    writing = (async () => {
      try {
        for (let i = 0; i < rows.length; i += BATCH) await write(rows.slice(i, i + BATCH));
        const projects = [...new Set(rows.map((r) => r.projectId))];
        await pool.query(PRUNE, [projects, keep]);
      } catch (err) {
        // The log is a convenience: a failed write loses these rows, never a request.
        logger.warn({ err: (err as Error).message, rows: rows.length }, 'request log: rows not written');
      } finally {
        writing = undefined;
      }
    })();
    await writing;
  }

  let stopped = false;
  const timer = setInterval(() => void flush(), opts.flushEveryMs ?? FLUSH_EVERY_MS);
  timer.unref();
  return {
    flush,
    dropped: () => dropped,
    /** Writes what is held and closes the pool; later calls do nothing. */
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await flush();
      await pool.end();
    },
  };
}
