// A project's request log, read by its owning tenant: the rows the front doors wrote (rest-compat/request-log.ts),
// newest first, filtered by status class, route text and credential kind, one page at a time.
import { errors } from '../../../platform/errors.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import type { ServiceDeps } from './context.ts';
import { checkPageSize } from './validation.ts';

export const REQUEST_LOG_PAGE_DEFAULT = 50;
export const REQUEST_LOG_PAGE_MAX = 200;
const ROUTE_FILTER_MAX = 200;

/** The credential kinds a row may carry (the filter's values). */
export const CREDENTIAL_KINDS = [
  'secret_key',
  'publishable_key',
  'client_token',
  'user_token',
  'tenant_token',
  'anonymous',
] as const;
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

export type LoggedRequest = {
  id: string;
  createdAt: Date;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  requestId: string;
  credential: string;
};

type Row = {
  id: string;
  at: Date | string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  request_id: string;
  credential: string;
};

export type RequestLogFilter = {
  first?: unknown;
  after?: unknown;
  status?: unknown;
  route?: unknown;
  credential?: unknown;
};

/** `like` pattern matching `text` anywhere, its wildcards taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Creates the request log reader. */
export function createRequestLogService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /** One page of the project's logged requests, newest first (the caller has checked the project is the tenant's). */
    async list(
      projectId: string,
      filter: RequestLogFilter,
    ): Promise<{ items: LoggedRequest[]; nextCursor: string | null }> {
      const first = checkPageSize('first', filter.first, REQUEST_LOG_PAGE_DEFAULT, REQUEST_LOG_PAGE_MAX);
      const after = decodeTimeCursor('after', filter.after);
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (filter.status !== undefined && filter.status !== null && filter.status !== '') {
        const i = STATUS_CLASSES.indexOf(filter.status as (typeof STATUS_CLASSES)[number]);
        if (i < 0) throw errors.validation('status', `must be one of ${STATUS_CLASSES.join(', ')}`);
        where.push('status >= ? and status < ?');
        params.push((i + 2) * 100, (i + 3) * 100);
      }
      if (filter.route !== undefined && filter.route !== null && filter.route !== '') {
        if (typeof filter.route !== 'string' || filter.route.length > ROUTE_FILTER_MAX)
          throw errors.validation('route', `must be text of at most ${ROUTE_FILTER_MAX} characters`);
        where.push(`route ilike ? escape '\\'`);
        params.push(containing(filter.route));
      }
      if (filter.credential !== undefined && filter.credential !== null && filter.credential !== '') {
        if (!CREDENTIAL_KINDS.includes(filter.credential as (typeof CREDENTIAL_KINDS)[number]))
          throw errors.validation('credential', `must be one of ${CREDENTIAL_KINDS.join(', ')}`);
        where.push('credential = ?');
        params.push(filter.credential);
      }
      if (after) {
        where.push('(at, id) < (?, ?)');
        params.push(after.createdAt, after.id);
      }
      const rows = await db.em().execute<Row[]>(
        `select id, at, method, route, status, duration_ms, request_id, credential from request_log
           where ${where.join(' and ')} order by at desc, id desc limit ?`,
        [...params, first + 1],
      );
      return timePage(rows, first, (r) => ({
        id: r.id,
        createdAt: new Date(r.at),
        method: r.method,
        route: r.route,
        status: r.status,
        durationMs: r.duration_ms,
        requestId: r.request_id,
        credential: r.credential,
      }));
    },
  };
}
