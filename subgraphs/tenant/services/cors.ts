// The CORS rule of each project (which web origins may call it from a browser): read and replaced by the owning
// tenant, listed for the front door (rest-compat/cors.ts), which keeps every rule in memory and hears of changes
// through the broadcast `cors.changed` (published in the transaction that makes the change, and announced to this
// process right after commit).
import { announceLocally, publishBroadcast } from '../../../platform/broadcast.ts';
import { errors } from '../../../platform/errors.ts';
import {
  CORS_DEFAULT_MAX_AGE,
  CORS_MAX_MAX_AGE,
  CORS_METHODS,
  CorsRuleError,
  checkHeaders,
  checkMethods,
  checkOrigins,
} from '../../../platform/cors.ts';
import type { CorsRuleRow } from '../../../platform/internal-operations.ts';
import type { ServiceDeps } from './context.ts';
import type { ProjectService } from './projects.ts';

/** The rule as the front door keeps it, and when it was last set (null: never, the defaults apply). */
export type ProjectCorsView = CorsRuleRow & { updatedAt: Date | null };

export type CorsInput = {
  allowedOrigins?: unknown;
  allowedMethods?: unknown;
  allowedHeaders?: unknown;
  exposedHeaders?: unknown;
  maxAge?: unknown;
  allowCredentials?: unknown;
};

type Row = {
  project_id: string;
  allowed_origins: string[];
  allowed_methods: string[];
  allowed_headers: string[];
  exposed_headers: string[];
  max_age: number;
  allow_credentials: boolean;
  updated_at: Date | string;
};

const COLUMNS =
  'project_id, allowed_origins, allowed_methods, allowed_headers, exposed_headers, max_age, allow_credentials, updated_at';
const TEXT_ARRAY = 'array(select jsonb_array_elements_text(?::jsonb))';

const viewOf = (r: Row): ProjectCorsView => ({
  projectId: r.project_id,
  allowedOrigins: r.allowed_origins,
  allowedMethods: r.allowed_methods,
  allowedHeaders: r.allowed_headers,
  exposedHeaders: r.exposed_headers,
  maxAge: r.max_age,
  allowCredentials: r.allow_credentials,
  updatedAt: new Date(r.updated_at),
});

/** No rule: no origin, the defaults for the rest. */
const none = (projectId: string): ProjectCorsView => ({
  projectId,
  allowedOrigins: [],
  allowedMethods: [...CORS_METHODS],
  allowedHeaders: [],
  exposedHeaders: [],
  maxAge: CORS_DEFAULT_MAX_AGE,
  allowCredentials: false,
  updatedAt: null,
});

const snake: Record<string, string> = {
  allowedOrigins: 'allowed_origins',
  allowedMethods: 'allowed_methods',
  allowedHeaders: 'allowed_headers',
  exposedHeaders: 'exposed_headers',
  maxAge: 'max_age',
  allowCredentials: 'allow_credentials',
};

function stringList(field: string, value: unknown, fallback: string[]): string[] {
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw errors.validation(snake[field] ?? field, 'expected a list of strings');
  return value as string[];
}

/** Checks a rule as sent (GraphQL names; messages name the REST fields). */
export function checkCorsInput(input: CorsInput): Omit<ProjectCorsView, 'projectId' | 'updatedAt'> {
  try {
    const allowCredentials = input.allowCredentials ?? false;
    if (typeof allowCredentials !== 'boolean') throw errors.validation('allow_credentials', 'expected true or false');
    const maxAge = input.maxAge ?? CORS_DEFAULT_MAX_AGE;
    if (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 0 || maxAge > CORS_MAX_MAX_AGE) {
      throw errors.validation('max_age', `expected whole seconds from 0 to ${CORS_MAX_MAX_AGE}`);
    }
    return {
      allowedOrigins: checkOrigins(
        stringList('allowedOrigins', input.allowedOrigins, []),
        allowCredentials,
        'allowed_origins',
      ),
      allowedMethods: checkMethods(
        stringList('allowedMethods', input.allowedMethods, [...CORS_METHODS]),
        'allowed_methods',
      ),
      allowedHeaders: checkHeaders(stringList('allowedHeaders', input.allowedHeaders, []), 'allowed_headers'),
      exposedHeaders: checkHeaders(stringList('exposedHeaders', input.exposedHeaders, []), 'exposed_headers'),
      maxAge,
      allowCredentials,
    };
  } catch (err) {
    if (err instanceof CorsRuleError) throw errors.validation(err.field, err.reason);
    throw err;
  }
}

export type CorsService = ReturnType<typeof createCorsService>;

/** Creates the CORS service. */
export function createCorsService({ db, projects }: Pick<ServiceDeps, 'db'> & { projects: ProjectService }) {
  const read = async (projectId: string): Promise<ProjectCorsView> => {
    const [row] = await db.em().execute<Row[]>(`select ${COLUMNS} from project_cors where project_id = ?`, [projectId]);
    return row ? viewOf(row) : none(projectId);
  };

  return {
    /** The rule of a project (the defaults and no origin when it has none). */
    get: read,

    /** Replaces the rule of a project the tenant owns; no origin removes it. */
    async set(tenantId: string, projectId: string, input: CorsInput): Promise<ProjectCorsView> {
      const rule = checkCorsInput(input);
      const project = await projects.getOwned(tenantId, projectId);
      await db.em().transactional(async (em) => {
        if (rule.allowedOrigins.length === 0)
          await em.execute('delete from project_cors where project_id = ?', [project.id]);
        else {
          await em.execute(
            // Lists travel as JSON: the ORM would spread an array parameter into a list of parameters.
            `insert into project_cors (${COLUMNS}) values (?, ${TEXT_ARRAY}, ${TEXT_ARRAY}, ${TEXT_ARRAY}, ${TEXT_ARRAY}, ?, ?, ?)
             on conflict (project_id) do update set allowed_origins = excluded.allowed_origins, allowed_methods = excluded.allowed_methods,
               allowed_headers = excluded.allowed_headers, exposed_headers = excluded.exposed_headers, max_age = excluded.max_age,
               allow_credentials = excluded.allow_credentials, updated_at = excluded.updated_at`,
            [
              project.id,
              ...[rule.allowedOrigins, rule.allowedMethods, rule.allowedHeaders, rule.exposedHeaders].map((l) =>
                JSON.stringify(l),
              ),
              rule.maxAge,
              rule.allowCredentials,
              new Date(),
            ],
          );
        }
        await publishBroadcast(em, 'cors.changed', { projectId: project.id });
      });
      announceLocally('cors.changed', { projectId: project.id });
      return await read(project.id);
    },

    /** Every project's rule (the front door's copy). A deleted project's row goes with it. */
    async all(): Promise<ProjectCorsView[]> {
      return (await db.em().execute<Row[]>(`select ${COLUMNS} from project_cors`)).map(viewOf);
    },
  };
}
