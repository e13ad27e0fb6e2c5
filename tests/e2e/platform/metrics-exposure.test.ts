// /metrics without a token (issue 28's small leaks): the platform's traffic per route is answered to the machine
// itself and private networks (a Prometheus beside it, a cluster's scraper), never to a caller on the public address.
// Behind a trusted reverse proxy the caller is the forwarded client, not the proxy.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_TRUST_PROXY: 'true' });
}, 90_000);
afterAll(async () => {
  await platform?.close();
});

const metricsFrom = async (forwardedFor?: string) =>
  await fetch(`${platform.url}/metrics`, { headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

describe('/metrics without TESSERA_METRICS_TOKEN', () => {
  it('answers loopback and private addresses', async () => {
    for (const from of [undefined, '10.1.2.3', '192.168.0.7', 'fd00::1']) {
      const res = await metricsFrom(from);
      expect({ from, status: res.status }).toEqual({ from, status: 200 });
      expect(await res.text()).toContain('# HELP');
    }
  });

  it('refuses a caller on a public address with 403 in the error shape', async () => {
    for (const from of ['8.8.8.8', '2a00:1450:4001::1']) {
      const res = await metricsFrom(from);
      expect({ from, status: res.status }).toEqual({ from, status: 403 });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('FORBIDDEN');
      expect(body.error.message).toMatch(/TESSERA_METRICS_TOKEN/);
    }
  });
});
