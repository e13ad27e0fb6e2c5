// Container health check (deploy/Dockerfile's HEALTHCHECK): exit 0 when this container's Tessera process answers
// GET /livez. A container runs one role, and the check cannot see which, so it asks each port the configuration
// gives a role (front door PORT, router TESSERA_ROUTER_PORT, subgraph TESSERA_SUBGRAPH_PORT) and passes if one answers.
import { loadConfig } from '../platform/config.ts';

/** The loopback /livez URLs of every role this configuration could be running. */
export function livenessUrls(env: Record<string, string | undefined> = process.env): string[] {
  const config = loadConfig(env);
  const ports = new Set([
    config.port,
    config.routerPort,
    ...(config.subgraphPort === undefined ? [] : [config.subgraphPort]),
  ]);
  return [...ports].filter((p) => p > 0).map((p) => `http://127.0.0.1:${p}/livez`);
}

async function alive(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

if (import.meta.main) {
  const results = await Promise.all(livenessUrls().map(alive));
  process.exit(results.some(Boolean) ? 0 : 1);
}
