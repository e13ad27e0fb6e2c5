// The public inbound webhook receiver (`POST /webhooks/:project_id/:slug`, also `/edge/webhooks/...`):
// hand-written because the function must see the exact bytes (signatures are computed over them) and
// every header. No credentials: the receiver is public by design; body size and a per-receiver rate are
// limited here. The function runs in the functions domain through the internal `_receiveWebhook`
// operation, called with the `internal` principal (the front door vouches for the request); the
// function itself then runs with its own project's identity.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createFailureLimiter } from '../../platform/rate-limit.ts';
import type { RequestContext } from '../../platform/auth.ts';
import { AppError } from '../../platform/errors.ts';
import { checkTextRecord, parseCheckedJson, textProblem } from '../../platform/input-guard.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../platform/internal-operations.ts';
import type { RawHandlerDeps, RawHandlerModule } from './types.ts';

const PATHS = ['/webhooks/:project_id/:slug', '/edge/webhooks/:project_id/:slug'];
const WINDOW_MS = 60_000;
/** Headers that describe the hop, not the sender's event: not handed to the function. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'te',
  'trailer',
]);

/**
 * The body as the function will see it (the functions domain parses JSON and form bodies) must be storable and
 * bounded like any other input: no NUL or lone surrogate, JSON nested no deeper than TESSERA_JSON_MAX_DEPTH.
 * Malformed JSON is left to the domain, which answers it.
 */
function checkWebhookBody(raw: string, contentType: string | undefined, maxDepth: number): void {
  const problem = textProblem(raw);
  if (problem)
    throw new AppError('VALIDATION_FAILED', `body: the webhook body ${problem}`, { field: 'body', source: 'body' });
  const type = (contentType ?? '').toLowerCase();
  if (raw === '') return;
  if (type.includes('json')) {
    try {
      JSON.parse(raw);
    } catch {
      return;
    }
    parseCheckedJson(raw, { maxDepth, where: 'body' });
  } else if (type.startsWith('application/x-www-form-urlencoded')) {
    checkTextRecord(Object.fromEntries(new URLSearchParams(raw)), 'body');
  }
}

export const functionsHandlers: RawHandlerModule = {
  name: 'functions',
  register: async (app: FastifyInstance, deps: RawHandlerDeps) => {
    const limiter = createFailureLimiter({ limit: deps.config.webhookRateLimit, windowMs: WINDOW_MS });
    await app.register(async (scope) => {
      // Every content type arrives as raw bytes, within the webhook body limit.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser(
        '*',
        { parseAs: 'buffer', bodyLimit: deps.config.webhookBodyLimit },
        (_req, body, done) => done(null, body),
      );
      const handler = async (req: FastifyRequest, reply: FastifyReply) => {
        const { project_id: projectId, slug } = req.params as { project_id: string; slug: string };
        const key = `${projectId}/${slug}`;
        await deps.checkProject(projectId);
        limiter.check(key);
        limiter.fail(key);
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined || HOP_HEADERS.has(name)) continue;
          headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
        checkWebhookBody(raw, headers['content-type'], deps.config.jsonMaxDepth);
        const query = Object.fromEntries(
          Object.entries(req.query as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]),
        );
        const idempotencyKey =
          typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
        const ctx: RequestContext = { requestId: String(req.id), principal: { kind: 'internal' }, ip: req.ip };
        const answer = (
          await callInternal(
            deps,
            INTERNAL_OPERATIONS.receiveWebhook,
            { projectId, slug, request: { method: req.method, headers, query, rawBody: raw, idempotencyKey } },
            ctx,
          )
        )._receiveWebhook;
        for (const [k, v] of Object.entries(answer.headers ?? {}))
          if (/^x-[a-z0-9-]+$/i.test(k) && typeof v === 'string' && v) void reply.header(k, v);
        return reply
          .code(answer.status)
          .type('application/json')
          .send(JSON.stringify(answer.body ?? null));
      };
      for (const url of PATHS) scope.post(url, handler);
    });
  },
  openapi: Object.fromEntries(
    PATHS.map((path) => [
      path.replace(/:([a-z_]+)/g, '{$1}'),
      {
        post: {
          operationId: path.startsWith('/edge') ? 'functions.webhook.receive.edge' : 'functions.webhook.receive',
          summary: 'Receive an inbound webhook (public, no X-Api-Key)',
          description:
            "Runs the receiver's function with `input = {body, headers, method, query, rawBody}` and answers the final step's output " +
            '(an `{"error", "status"}` result answers with that status). Unknown receivers: 404. An `Idempotency-Key` header replays the stored answer ' +
            'of an earlier request with the same key and body (24 hours; `X-Idempotent-Replay: true`), 409 while that request still runs, 422 `IDEMPOTENCY_KEY_REUSED` ' +
            'for another body (the same rules as invoke). Body-size and rate limited (413, 429).',
          tags: ['Edge functions'],
          security: [],
          parameters: [
            { name: 'project_id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string' } },
          ],
          requestBody: { required: false, content: { '*/*': { schema: {} } } },
          responses: {
            '200': { description: "The function's output", content: { 'application/json': { schema: {} } } },
            '404': { $ref: '#/components/responses/E404' },
            '409': { $ref: '#/components/responses/E409' },
            '422': { $ref: '#/components/responses/E422' },
            '429': { $ref: '#/components/responses/E429' },
            ...Object.fromEntries(
              ['4XX', '5XX'].map((range) => [
                range,
                {
                  description: `The function's own error answer, with the ${range} status it chose (an \`{"error", "status"}\` result)`,
                  content: { 'application/json': { schema: {} } },
                },
              ]),
            ),
          },
        },
      },
    ]),
  ),
};
