// Server-side request forgery through HTTP steps: every way to name an internal address (IPv4, IPv6 forms that
// carry an IPv4 address: mapped, compatible, 6to4, Teredo, NAT64; a host name resolving to loopback) is refused
// before any connection, and the internal server is never reached.
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startEdgeWorld, type EdgeWorld } from '../e2e/functions/functions-helpers.ts';
import { attackTable, type Attack } from './attack-table.ts';
import { startInternalServer, type InternalServer } from '../support/internal-server.ts';

let w: EdgeWorld;
let internal: InternalServer;

beforeAll(async () => {
  internal = await startInternalServer();
  w = await startEdgeWorld();
}, 60_000);

afterAll(async () => {
  await w?.p.close();
  await internal?.close();
});

const TARGETS: [string, string][] = [
  ['loopback IPv4', '127.0.0.1'],
  ['a host name resolving to loopback', 'localhost'],
  ['the cloud metadata address', '169.254.169.254'],
  ['a private address', '10.0.0.1'],
  ['IPv6 loopback', '[::1]'],
  ['IPv4-mapped IPv6', '[::ffff:127.0.0.1]'],
  ['IPv4-mapped IPv6 in hex', '[::ffff:7f00:1]'],
  ['IPv4-compatible IPv6', '[::7f00:1]'],
  ['6to4 carrying 127.0.0.1', '[2002:7f00:1::]'],
  ['6to4 carrying the metadata address', '[2002:a9fe:a9fe::1]'],
  ['Teredo whose client is 127.0.0.1', '[2001:0:4136:e378:8000:63bf:80ff:fffe]'],
  ['NAT64 carrying 127.0.0.1', '[64:ff9b::7f00:1]'],
];

describe('HTTP steps reaching internal addresses', () => {
  const rows: Attack[] = TARGETS.map(([what, host]) => ({
    name: `an HTTP step calls ${what} (${host})`,
    attack: async () => {
      const name = `ssrf-${what.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`;
      const made = await w.call('POST', '/edge/api/v1/functions', {
        apiKey: w.apiKey,
        body: {
          name,
          steps: [
            {
              name: 'call',
              kind: 'HTTP',
              retries: 0,
              request: { url: `http://${host}:${internal.port}/latest/meta-data` },
            },
          ],
        },
      });
      expect(made.status).toBe(201);
      const res = await w.call('POST', `/edge/api/v1/invoke/${name}`, { apiKey: w.apiKey, body: {} });
      expect(res.body?.error?.details?.reason).toBe('HTTP_REFUSED');
      return res;
    },
    refused: { status: 502, code: 'FUNCTION_FAILED', notContaining: () => ['internal secrets'] },
    intact: async () => expect(internal.hits()).toBe(0),
  }));
  attackTable(rows);
});
