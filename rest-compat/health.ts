// Health endpoints: /health (aggregated) and /health/<service>/readyz, each answering honestly for its
// subgraph and that subgraph's database (503 when down).
import type { FastifyInstance } from 'fastify';
import type { HealthReport, SubgraphHandle } from '../platform/subgraph.ts';

/** Public service names of the seed → subgraph names. */
export const HEALTH_SERVICES: Record<string, string> = { auth: 'tenant', idp: 'identity', core: 'data', storage: 'storage', edge: 'functions' };

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
  app.get('/health', async (_req, reply) => {
    const entries = await Promise.all(
      Object.entries(HEALTH_SERVICES).map(async ([service, subgraph]) => [service, await check(handles.get(subgraph), subgraph)] as const),
    );
    const services = Object.fromEntries(entries);
    const ok = entries.every(([, r]) => r.status === 'ok');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', gateway: 'ok', services });
  });
}
