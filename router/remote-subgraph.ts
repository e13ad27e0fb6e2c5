// A subgraph reached over HTTP (split mode): every call carries the router's signed context.
// Operations whose variables hold file uploads (graphql-upload `Upload` values, from a GraphQL multipart
// request at /graphql) are forwarded as a multipart request whose file parts stream from the caller's
// upload: the bytes never sit whole in memory.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import Upload from 'graphql-upload/Upload.mjs';
import { INTERNAL_CONTEXT_HEADER, signContext } from '../platform/auth.ts';
import type { HealthReport, SubgraphHandle, ExecutionResultJson } from '../platform/subgraph.ts';

/** Handle on a subgraph served by platform/subgraph-server.ts at `routingUrl`. */
export function remoteSubgraph(name: string, routingUrl: string, secret: string, timeoutMs = 10_000): SubgraphHandle {
  const base = routingUrl.replace(/\/graphql\/?$/, '');
  return {
    name,
    async execute(query, variables, ctx, operationName) {
      const headers: Record<string, string> = {
        [INTERNAL_CONTEXT_HEADER]: await signContext(ctx, secret),
        'x-request-id': ctx.requestId,
      };
      const uploads = uploadsIn(variables);
      let init: RequestInit;
      if (uploads.size === 0) {
        init = {
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables, operationName }),
          signal: AbortSignal.timeout(timeoutMs),
        };
      } else {
        // No overall time-out: the file streams as fast as the caller sends it, and a caller that goes
        // away fails the upload's stream, which aborts this request.
        const form = multipartBody({ query, variables: withoutUploads(variables), operationName }, uploads);
        init = {
          headers: { ...headers, 'content-type': form.contentType, 'apollo-require-preflight': 'true' },
          body: form.body,
          duplex: 'half',
        } as RequestInit;
      }
      let res: Response;
      try {
        // redirect 'error': a body stream cannot be replayed, and fetch would otherwise buffer it to follow redirects.
        res = await fetch(routingUrl, { method: 'POST', redirect: 'error', ...init });
      } catch (err) {
        return neverReached(err) ? unavailable(name, causeOf(err)) : interrupted(name, causeOf(err));
      }
      if (!res.ok && !res.headers.get('content-type')?.includes('json')) return unavailable(name, `HTTP ${res.status}`);
      try {
        return (await res.json()) as ExecutionResultJson;
      } catch (err) {
        // The subgraph went away while sending its answer: the operation may have taken effect.
        return interrupted(name, causeOf(err));
      }
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

/** Every Upload in the variables with the object paths (`variables.a.0`) where it occurs. */
function uploadsIn(variables: Record<string, unknown> | undefined): Map<Upload, string[]> {
  const found = new Map<Upload, string[]>();
  const walk = (value: unknown, path: string) => {
    if (value instanceof Upload) found.set(value, [...(found.get(value) ?? []), path]);
    else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}.${i}`));
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`);
    }
  };
  if (variables) walk(variables, 'variables');
  return found;
}

/** A copy of the variables with every Upload replaced by null (the multipart spec's `operations`). */
function withoutUploads(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value ?? {}, (_k, v: unknown) => (v instanceof Upload ? null : v))) as Record<
    string,
    unknown
  >;
}

const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+$/;

/** The part header of one file: the name travels percent-encoded (RFC 7578 / 8187), so no byte of it can break the form. */
function filePartHeader(
  boundary: string,
  field: string,
  filename: string | undefined,
  mimetype: string | undefined,
): string {
  const name = filename
    ? `filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`
    : 'filename=""';
  const type = mimetype && MEDIA_TYPE.test(mimetype) ? mimetype : 'application/octet-stream';
  return `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; ${name}\r\nContent-Type: ${type}\r\n\r\n`;
}

/**
 * A GraphQL multipart request (operations, map, then the files in order) as a stream. Each file part waits
 * for its upload to arrive and copies its read stream (graphql-upload keeps it in a temporary file).
 */
function multipartBody(
  operations: Record<string, unknown>,
  uploads: Map<Upload, string[]>,
): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `tessera-${crypto.randomUUID()}`;
  const files = [...uploads];
  const map = Object.fromEntries(files.map(([, paths], i) => [String(i), paths]));
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify(operations)}\r\n`,
    );
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n\r\n${JSON.stringify(map)}\r\n`);
    for (const [i, [upload]] of files.entries()) {
      const file = await upload.promise;
      yield Buffer.from(filePartHeader(boundary, String(i), file.filename, file.mimetype));
      for await (const chunk of file.createReadStream()) yield chunk as Buffer;
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return {
    body: Readable.toWeb(Readable.from(parts())) as ReadableStream<Uint8Array>,
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/** Why fetch failed: its cause's code and message (undici puts the socket error there). */
export function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${cause.code}: ${cause.message ?? ''}` : (err as Error).message;
}

/**
 * True when the request never reached the subgraph (nothing listening, connection refused or not made): only then
 * is a 503 promised to mean "not done, retry". A connection lost after the request was sent, or a time-out, may
 * have left the operation done: that is SERVICE_INTERRUPTED (502), which a client must not blindly retry.
 */
export function neverReached(err: unknown): boolean {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'EHOSTUNREACH'
  );
}

function interrupted(name: string, why: string): ExecutionResultJson {
  return {
    data: null,
    errors: [
      {
        message: `The ${name} service stopped while answering: the request may or may not have taken effect`,
        extensions: { code: 'SERVICE_INTERRUPTED', http: { status: 502 }, details: { service: name, cause: why } },
      },
    ],
  };
}

function unavailable(name: string, why: string): ExecutionResultJson {
  return {
    data: null,
    errors: [
      {
        message: `The ${name} service is unavailable`,
        extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503 }, details: { service: name, cause: why } },
      },
    ],
  };
}
