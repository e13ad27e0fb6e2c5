// Outbound connections of functions (HTTP steps, project SMTP servers). Unless the operator allows it,
// loopback, private, link-local and other non-public addresses are refused. The host name is resolved
// here and EVERY address it resolves to is checked; the connection then uses the checked address (a
// custom `lookup`), so a second resolution cannot swap in another address (DNS rebinding).
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const blocked = new net.BlockList();
for (const [addr, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(addr, prefix, 'ipv6');

/** True when `address` (an IP literal) is loopback, private, link-local, reserved or multicast. */
export function isNonPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const lower = address.toLowerCase();
    // IPv4-mapped and IPv4-compatible forms reach the IPv4 address.
    const mapped = /^(?:0*:)*(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower.replace(/^::/, '0:'));
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
    if (hexMapped) {
      const hi = parseInt(hexMapped[1]!, 16);
      const lo = parseInt(hexMapped[2]!, 16);
      return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
    }
    return blocked.check(lower, 'ipv6');
  }
  return true;
}

export class OutboundRefused extends Error {}

/** Resolves `host` and returns its addresses, refusing non-public ones unless `allowPrivate`. */
export async function resolveChecked(host: string, allowPrivate: boolean): Promise<{ address: string; family: number }[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(bare) ? [{ address: bare, family: net.isIP(bare) }] : await dns.promises.lookup(bare, { all: true, verbatim: true }).catch((err: Error) => {
    throw new OutboundRefused(`cannot resolve ${host}: ${err.message}`);
  });
  if (addresses.length === 0) throw new OutboundRefused(`${host} has no address`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad) throw new OutboundRefused(`${host} resolves to ${bad.address}, a loopback, private or link-local address (refused)`);
  }
  return addresses;
}

export type OutboundResponse = { status: number; headers: Record<string, string>; body: unknown };

const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/** One HTTP request through the address check; no redirects followed; JSON bodies parsed. */
export async function guardedRequest(opts: {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}): Promise<OutboundResponse> {
  const addresses = await resolveChecked(opts.url.hostname, opts.allowPrivate);
  const pick = addresses[0]!;
  const lib = opts.url.protocol === 'https:' ? https : http;
  return await new Promise<OutboundResponse>((resolve, reject) => {
    const req = lib.request(
      opts.url,
      {
        method: opts.method,
        headers: opts.headers,
        timeout: opts.timeoutMs,
        signal: opts.signal,
        // Connect to the address checked above, whatever a new resolution would say.
        lookup: ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
          if (options?.all) cb(null, [pick]);
          else cb(null, pick.address, pick.family);
        }) as never,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy(new Error(`the response is larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          let body: unknown = text;
          if (/json/i.test(headers['content-type'] ?? '') && text !== '') {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}
