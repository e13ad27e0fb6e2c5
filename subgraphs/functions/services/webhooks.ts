// Inbound webhook receivers: `{slug, function, description?}` per project, and the run of one inbound
// request (the public receiver's handler calls `receive` through an internal operation). An optional
// Idempotency-Key returns the stored answer of an earlier request with the same key and body, without running
// again (idempotency.ts, the same implementation as invoke's).
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { checkSlug, checkFunctionName } from './definitions.ts';
import { makeInput, publicFailureError, type Engine } from './engine.ts';
import { toFunction, type FunctionService } from './functions.ts';
import { fingerprintOf, type HttpAnswer, type Idempotency } from './idempotency.ts';
import {
  announceFunctionsChanged,
  publishFunctionsChanged,
  type ReceiverCache,
  type ReceiverEntry,
} from './receiver-cache.ts';
import { sealedSecretsOf } from './secrets.ts';
import { isUniqueViolation, type Sql } from './sql.ts';
import { optionalText } from './validation.ts';
import { isUuid } from '../../../platform/ids.ts';

export type WebhookReceiver = {
  id: string;
  projectId: string;
  slug: string;
  functionId: string;
  functionName: string;
  description: string;
  createdAt: Date;
};
export type { HttpAnswer } from './idempotency.ts';
export type InboundRequest = {
  method: string;
  headers: Record<string, string>;
  query: Record<string, unknown>;
  rawBody: string;
  idempotencyKey?: string | null;
};

type Row = Record<string, unknown>;
const toReceiver = (r: Row): WebhookReceiver => ({
  id: r.id as string,
  projectId: r.project_id as string,
  slug: r.slug as string,
  functionId: r.function_id as string,
  functionName: r.function_name as string,
  description: r.description as string,
  createdAt: new Date(r.created_at as string),
});

const SELECT =
  'select w.*, f.name as function_name from webhook_receivers w join edge_functions f on f.id = w.function_id';

/** The body a function sees: JSON parsed, forms decoded, anything else as text. */
export function parseBody(contentType: string | undefined, raw: string): unknown {
  if (raw === '') return null;
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw errors.badRequest('The body is not valid JSON (Content-Type says JSON)');
    }
  }
  if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  return raw;
}

export type WebhookService = ReturnType<typeof createWebhookService>;

/** Creates the webhook service. */
export function createWebhookService({
  sql,
  functions,
  engine,
  receivers,
  idempotency,
}: {
  sql: Sql;
  functions: FunctionService;
  engine: Engine;
  receivers: ReceiverCache;
  idempotency: Idempotency;
}) {
  /** The receiver's function and the project's sealed secrets: from the cache, or in one round trip (then cached). */
  const lookup = async (projectId: string, slug: string, notFound: () => Error): Promise<ReceiverEntry> => {
    const key = receivers.keyOf(projectId, slug);
    const cached = await receivers.get(key);
    if (cached) return cached;
    const generation = receivers.generation();
    const rows = await sql.rows(
      `select to_jsonb(f) as function_row, ${sealedSecretsOf('w.project_id')} as sealed_secrets
      from webhook_receivers w join edge_functions f on f.id = w.function_id where w.project_id = ? and w.slug = ?`,
      [projectId, slug],
    );
    if (!rows[0]) throw notFound();
    const entry: ReceiverEntry = {
      fn: toFunction(rows[0].function_row as Record<string, unknown>),
      sealedSecrets: rows[0].sealed_secrets as Record<string, string>,
    };
    receivers.remember(key, entry, generation);
    return entry;
  };

  return {
    /** Registers a receiver; the slug defaults to the function's slug. */
    async create(
      projectId: string,
      input: { slug?: unknown; function?: unknown; description?: unknown },
    ): Promise<WebhookReceiver> {
      const name = checkFunctionName(input.function, 'function');
      const fn = await functions.findByName(projectId, name);
      if (!fn) throw errors.validation('function', `no function named "${name}" in this project`);
      const slug = input.slug === undefined || input.slug === null ? fn.slug : checkSlug(input.slug);
      const description = optionalText('description', input.description, 1000);
      try {
        await sql.run(
          'insert into webhook_receivers (id, project_id, slug, function_id, description, created_at) values (?, ?, ?, ?, ?, ?)',
          [crypto.randomUUID(), projectId, slug, fn.id, description, new Date()],
        );
      } catch (err) {
        if (isUniqueViolation(err))
          throw errors.conflict(`A webhook receiver with slug "${slug}" already exists`, { field: 'slug', slug });
        throw err;
      }
      return toReceiver((await sql.rows(`${SELECT} where w.project_id = ? and w.slug = ?`, [projectId, slug]))[0]!);
    },

    async list(projectId: string): Promise<WebhookReceiver[]> {
      return (await sql.rows(`${SELECT} where w.project_id = ? order by w.slug`, [projectId])).map(toReceiver);
    },

    async remove(projectId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the receiver id, as ?id= or in the body)');
      if (!isUuid(id)) throw errors.notFound('webhook receiver', String(id).slice(0, 100));
      // A cached receiver is dropped everywhere when this commits (a new receiver needs nothing: only found ones are cached).
      const n = await sql.tx(async (tx) => {
        const deleted = await tx.run('delete from webhook_receivers where id = ? and project_id = ?', [id, projectId]);
        if (deleted > 0) await publishFunctionsChanged(tx, projectId);
        return deleted;
      });
      if (n === 0) throw errors.notFound('webhook receiver', id);
      announceFunctionsChanged(projectId);
    },

    /** Runs the receiver's function for one inbound request; unknown project or slug → NOT_FOUND. */
    async receive(projectId: string, slug: string, req: InboundRequest): Promise<HttpAnswer> {
      const notFound = () => errors.notFound('webhook receiver', `${projectId.slice(0, 64)}/${slug.slice(0, 64)}`);
      if (!isUuid(projectId)) throw notFound();
      const { fn, sealedSecrets } = await lookup(projectId, slug, notFound);
      // The same key and body within 24 hours answers the first run's answer (webhooks are at-least-once: senders retry).
      const scope = {
        projectId,
        scope: `webhook/${slug}`,
        key: req.idempotencyKey,
        fingerprint: fingerprintOf('webhook', req.rawBody),
        leaseMs: fn.timeoutMs + 60_000,
      };
      return await idempotency.run(scope, async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
        const input = makeInput({
          body: parseBody(headers['content-type'], req.rawBody),
          headers,
          method: req.method.toUpperCase(),
          query: req.query,
          rawBody: req.rawBody,
        });
        const outcome = await engine.runSync({
          fn,
          input,
          trigger: 'webhook',
          triggerRef: slug,
          depth: 0,
          dryRun: false,
          sealedSecrets,
        });
        // The caller is anonymous: it learns that the run failed and its execution id, never why (that may name a secret or a row).
        if (outcome.status === 'failed') throw publicFailureError(outcome);
        return {
          status: outcome.responseStatus,
          body: outcome.output,
          headers: { 'x-execution-id': outcome.executionId ?? '' },
        };
      });
    },
  };
}
