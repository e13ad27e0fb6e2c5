// Outbound connections of functions (HTTP steps, project SMTP servers). Unless the operator allows it,
// loopback, private, link-local and other non-public addresses are refused. The host name is resolved
// here and EVERY address it resolves to is checked; the connection then uses the checked address (a
// custom `lookup`), so a second resolution cannot swap in another address (DNS rebinding).
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isNonPublicAddress } from '../../../platform/addresses.ts';

export class OutboundRefused extends Error {}

/** Resolves `host` and returns its addresses, refusing non-public ones unless `allowPrivate`. */
export async function resolveChecked(
  host: string,
  allowPrivate: boolean,
): Promise<{ address: string; family: number }[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(bare)
    ? [{ address: bare, family: net.isIP(bare) }]
    : await dns.promises.lookup(bare, { all: true, verbatim: true }).catch((err: Error) => {
        throw new OutboundRefused(`cannot resolve ${host}: ${err.message}`);
      });
  if (addresses.length === 0) throw new OutboundRefused(`${host} has no address`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isNonPublicAddress(a.address));
    if (bad)
      throw new OutboundRefused(
        `${host} resolves to ${bad.address}, a loopback, private or link-local address (refused)`,
      );
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
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
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
