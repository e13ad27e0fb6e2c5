// A subgraph reached over HTTP (split mode): every call carries the router's signed context.
import { INTERNAL_CONTEXT_HEADER, signContext } from '../platform/auth.ts';
import type { HealthReport, SubgraphHandle, ExecutionResultJson } from '../platform/subgraph.ts';

/** Handle on a subgraph served by platform/subgraph-server.ts at `routingUrl`. */
export function remoteSubgraph(name: string, routingUrl: string, secret: string, timeoutMs = 10_000): SubgraphHandle {
  const base = routingUrl.replace(/\/graphql\/?$/, '');
  return {
    name,
    async execute(query, variables, ctx, operationName) {
      let res: Response;
      try {
        res = await fetch(routingUrl, {
          method: 'POST',
          redirect: 'error',
          signal: AbortSignal.timeout(timeoutMs),
          headers: { 'content-type': 'application/json', [INTERNAL_CONTEXT_HEADER]: await signContext(ctx, secret), 'x-request-id': ctx.requestId },
          body: JSON.stringify({ query, variables, operationName }),
        });
      } catch (err) {
        return unavailable(name, (err as Error).message);
      }
      if (!res.ok && !res.headers.get('content-type')?.includes('json')) return unavailable(name, `HTTP ${res.status}`);
      return (await res.json()) as ExecutionResultJson;
    },
    async health(): Promise<HealthReport> {
      try {
        const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
        const body = (await res.json()) as HealthReport;
        return res.ok ? body : { ...body, status: 'down' };
      } catch (err) {
        return { status: 'down', database: 'down', detail: `subgraph ${name} unreachable: ${(err as Error).message}` };
      }
    },
  };
}

function unavailable(name: string, why: string): ExecutionResultJson {
  return {
    data: null,
    errors: [{ message: `The ${name} service is unavailable`, extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503 }, details: { service: name, cause: why } } }],
  };
}
