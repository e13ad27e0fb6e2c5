// Shared set-up of the storage end-to-end tests: a tenant with a project (API key), multipart uploads
// built by hand (so a body can be a generated stream of any size), and a JSON client.
import { Readable } from 'node:stream';
import pg from 'pg';
import { asRes, client, type Res } from '../../support/http.ts';

export type StorageProject = { id: string; apiKey: string; tenantToken: string };

export const STORAGE = '/storage/api/v1/storage';

/** Signs up a tenant and creates a project; answers its id and API key. */
export async function newStorageProject(base: string): Promise<StorageProject> {
  const call = client(base);
  const email = `store-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'correct horse battery staple';
  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  const tenantToken = login.body.access_token as string;
  const created = await call('POST', '/auth/api/v1/projects', { token: tenantToken, body: { name: 'Files' } });
  if (created.status !== 201) throw new Error(`project: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.project.id, apiKey: created.body.project.api_key, tenantToken };
}

/**
 * Raises the free plan to 512 MiB per upload and 1 GiB in all on the database at `databaseUrl`, for the 200 MB upload
 * tests; as an operator would (plans have no API), before anyone has read the plans (they are cached).
 */
export async function raiseFreePlanForLargeUploads(databaseUrl: string): Promise<void> {
  const MB = 1024 * 1024;
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(`update plans set max_upload_bytes = $1, max_storage_bytes = $2 where id = 'free'`, [
      512 * MB,
      1024 * MB,
    ]);
  } finally {
    await c.end();
  }
}

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; contentType?: string; body: Buffer | (() => AsyncIterable<Uint8Array>) };

const BOUNDARY = '----tessera-test-boundary-7d1f0c2a';

/** A multipart/form-data body as a stream (file parts may be generated, never held whole). */
export function multipart(parts: Part[]): { body: ReadableStream<Uint8Array>; contentType: string } {
  async function* gen(): AsyncGenerator<Uint8Array> {
    for (const p of parts) {
      if ('value' in p) {
        yield Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`);
      } else {
        yield Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: ${p.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        );
        if (Buffer.isBuffer(p.body)) yield p.body;
        else for await (const chunk of p.body()) yield chunk;
        yield Buffer.from('\r\n');
      }
    }
    yield Buffer.from(`--${BOUNDARY}--\r\n`);
  }
  return {
    body: Readable.toWeb(Readable.from(gen())) as ReadableStream<Uint8Array>,
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}

/** `size` bytes of a repeating pattern, produced in 1 MiB chunks. */
export function generated(size: number, chunk = 1024 * 1024): () => AsyncIterable<Uint8Array> {
  const block = Buffer.alloc(chunk);
  for (let i = 0; i < chunk; i++) block[i] = (i * 31 + 7) & 0xff;
  return async function* () {
    let left = size;
    while (left > 0) {
      const n = Math.min(left, chunk);
      yield n === chunk ? block : block.subarray(0, n);
      left -= n;
    }
  };
}

type Creds = { apiKey?: string; token?: string; query?: string };

function authHeaders(c: Creds): Record<string, string> {
  const h: Record<string, string> = {};
  if (c.apiKey) h['x-api-key'] = c.apiKey;
  if (c.token) h.authorization = `Bearer ${c.token}`;
  return h;
}

/** POSTs a multipart upload. */
export async function upload(base: string, parts: Part[], creds: Creds = {}): Promise<Res> {
  const { body, contentType } = multipart(parts);
  const res = await fetch(`${base}${STORAGE}/upload${creds.query ? `?${creds.query}` : ''}`, {
    method: 'POST',
    headers: { ...authHeaders(creds), 'content-type': contentType },
    body,
    duplex: 'half',
  } as RequestInit);
  return await asRes(res);
}

/** Uploads a small file with the API key (confirmed unless told otherwise). */
export async function put(
  base: string,
  p: StorageProject,
  folder: string,
  name: string,
  content: string | Buffer,
  opts: { confirm?: boolean; contentType?: string } = {},
): Promise<Res> {
  const parts: Part[] = [];
  if (folder) parts.push({ name: 'folder', value: folder });
  if (opts.confirm !== false) parts.push({ name: 'confirm', value: 'true' });
  parts.push({
    name: 'file',
    filename: name,
    contentType: opts.contentType ?? 'text/plain',
    body: Buffer.from(content),
  });
  return await upload(base, parts, { apiKey: p.apiKey });
}

/** GETs a download; answers status, headers and the bytes. */
export async function download(
  base: string,
  id: string,
  opts: Creds & { headers?: Record<string, string> } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; headers: Headers; bytes: Buffer; json?: any }> {
  const res = await fetch(`${base}${STORAGE}/download/${id}${opts.query ? `?${opts.query}` : ''}`, {
    headers: { ...authHeaders(opts), ...opts.headers },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json;
  if (res.headers.get('content-type')?.includes('application/json'))
    json = JSON.parse(bytes.toString('utf8') || 'null');
  return { status: res.status, headers: res.headers, bytes, json };
}

export { client };
