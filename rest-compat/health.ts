// Health endpoints: /health (aggregated) and /health/<service>/readyz, each answering honestly for its
// subgraph and that subgraph's database (503 when down); /livez answers while the process serves HTTP
// (a liveness probe that must not fail because a database or another process is down).
import type { FastifyInstance } from 'fastify';
import type { HealthReport, SubgraphHandle } from '../platform/subgraph.ts';

/** Public service names of the seed → subgraph names. */
export const HEALTH_SERVICES: Record<string, string> = {
  auth: 'tenant',
  idp: 'identity',
  core: 'data',
  storage: 'storage',
  edge: 'functions',
};

async function check(handle: SubgraphHandle | undefined, name: string): Promise<HealthReport> {
  if (!handle) return { status: 'down', database: 'down', detail: `no ${name} subgraph` };
  return await handle.health();
}

/** Registers the health routes. */
export function registerHealthRoutes(app: FastifyInstance, handles: Map<string, SubgraphHandle>): void {
  for (const [service, subgraph] of Object.entries(HEALTH_SERVICES)) {
    app.get(`/health/${service}/readyz`, async (_req, reply) => {
      const report = await check(handles.get(subgraph), subgraph);
      return reply.code(report.status === 'ok' ? 200 : 503).send({ service, subgraph, ...report });
    });
  }
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/health', async (_req, reply) => {
    const entries = await Promise.all(
      Object.entries(HEALTH_SERVICES).map(
        // Each service names its subgraph too (the docs speak of tenant, identity, data, storage, functions).
        async ([service, subgraph]) =>
          [service, { subgraph, ...(await check(handles.get(subgraph), subgraph)) }] as const,
      ),
    );
    const services = Object.fromEntries(entries);
    const ok = entries.every(([, r]) => r.status === 'ok');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', gateway: 'ok', services });
  });
}

const report = {
  type: 'object',
  properties: {
    service: { type: 'string' },
    subgraph: { type: 'string' },
    status: { type: 'string', enum: ['ok', 'down'] },
    database: { type: 'string', enum: ['ok', 'down'] },
    detail: { type: 'string' },
  },
};

const all = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'] },
    gateway: { type: 'string' },
    services: { type: 'object', additionalProperties: report },
  },
};

/** OpenAPI path items of the health endpoints. */
export const HEALTH_OPENAPI: Record<string, Record<string, Record<string, unknown>>> = {
  '/metrics': {
    get: {
      operationId: 'health.metrics',
      summary:
        'Prometheus metrics of this process (text format 0.0.4); with TESSERA_METRICS_TOKEN set, only for `Authorization: Bearer <token>`',
      tags: ['Health'],
      description:
        'Counters and histograms of HTTP requests, GraphQL operations, pools and jobs for Prometheus to scrape. Without TESSERA_METRICS_TOKEN only loopback and private addresses are answered (403 otherwise); with it, only the bearer token.',
      security: [],
      responses: {
        '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
        '401': {
          description: 'TESSERA_METRICS_TOKEN is set and the request does not carry it',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
        '403': {
          description: 'No TESSERA_METRICS_TOKEN, and the caller is not on a loopback or private address',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  },
  '/livez': {
    get: {
      operationId: 'health.live',
      summary:
        'Liveness of this process (200 while it serves HTTP, whatever the state of databases and other processes)',
      tags: ['Health'],
      description: "For a process supervisor's liveness probe: it never asks a database. Public.",
      security: [],
      responses: {
        '200': {
          description: 'Alive',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
            },
          },
        },
      },
    },
  },
  '/health': {
    get: {
      operationId: 'health.all',
      summary: 'Aggregated health of every service and its database (503 when any is down)',
      tags: ['Health'],
      description:
        "Each service by its name (auth: tenant management, idp: identity provider, core: data API, storage, edge: functions) with its state and its database's. Public.",
      security: [],
      responses: {
        '200': {
          description: 'All up',
          content: {
            'application/json': {
              schema: all,
            },
          },
        },
        '503': {
          description: 'A service is down (same body, status "degraded")',
          content: { 'application/json': { schema: all } },
        },
      },
    },
  },
  ...Object.fromEntries(
    Object.entries(HEALTH_SERVICES).map(([service, subgraph]) => [
      `/health/${service}/readyz`,
      {
        get: {
          operationId: `health.${service}`,
          summary: `Readiness of the ${subgraph} service and its database (503 when down)`,
          description: `For a load balancer's readiness probe of the \`${service}\` service (the ${subgraph} domain). Public.`,
          tags: ['Health'],
          security: [],
          responses: {
            '200': { description: 'Ready', content: { 'application/json': { schema: report } } },
            '503': { description: 'Down', content: { 'application/json': { schema: report } } },
          },
        },
      },
    ]),
  ),
};
