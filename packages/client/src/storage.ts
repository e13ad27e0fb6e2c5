// Storage: upload (multipart, streamed, with progress), download, listings and, with the secret key, policies.
// Uploads report progress through XMLHttpRequest in browsers (fetch cannot report an upload's progress there) and
// through a counted stream elsewhere (Node).
import { errorOf, TesseraError } from './errors.ts';
import type { Http } from './http.ts';
import type { BodyOf, ResponseOf, StorageObject, StoragePolicy } from './types.ts';

const BASE = '/storage/api/v1/storage';

/** What may be uploaded: a Blob or File, bytes, text, or a stream of bytes (give `size` for progress). */
export type UploadBody =
  Blob | Uint8Array | ArrayBuffer | string | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export type UploadOptions = {
  /** Folder (`a/b`), default the top level. */
  folder?: string;
  /** Object name; default the File's name. */
  name?: string;
  contentType?: string;
  /** Ready at once (otherwise pending until `confirm`). */
  confirm?: boolean;
  /** Replace an object of the same folder and name. */
  upsert?: boolean;
  /** Only for anonymous uploads into a public folder. */
  projectId?: string;
  /** Bytes in all, for progress of a stream. */
  size?: number;
  /** Called as bytes go out: (sent, total or undefined). */
  onProgress?: (sent: number, total: number | undefined) => void;
  signal?: AbortSignal;
};

/** An upload ready to send: the file, the form fields before it, its name and type, and the caller's options. */
type PreparedUpload = {
  body: UploadBody;
  fields: [string, string][];
  fileName: string;
  contentType: string;
  opts: UploadOptions;
};

type XhrLike = {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: unknown): void;
  abort(): void;
  status: number;
  responseText: string;
  getResponseHeader(name: string): string | null;
  upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
};

async function* chunksOf(body: UploadBody): AsyncGenerator<Uint8Array> {
  if (typeof body === 'string') yield new TextEncoder().encode(body);
  else if (body instanceof Uint8Array) yield body;
  else if (body instanceof ArrayBuffer) yield new Uint8Array(body);
  else if (typeof Blob !== 'undefined' && body instanceof Blob)
    yield* chunksOf(body.stream() as ReadableStream<Uint8Array>);
  else if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } else yield* body as AsyncIterable<Uint8Array>;
}

function sizeOf(body: UploadBody, given?: number): number | undefined {
  if (given !== undefined) return given;
  if (typeof body === 'string') return new TextEncoder().encode(body).byteLength;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return body.byteLength;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size;
  return undefined;
}

const quote = (s: string) => s.replace(/["\r\n\\]/g, (c) => encodeURIComponent(c));

export class Storage {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  /** Uploads a file → the object (`pending`, or `ready` with `confirm`). */
  async upload(body: UploadBody, opts: UploadOptions = {}): Promise<StorageObject> {
    const fileName = opts.name ?? ((body as { name?: unknown }).name as string | undefined) ?? 'file';
    const contentType =
      opts.contentType ??
      ((typeof Blob !== 'undefined' && body instanceof Blob && body.type) || 'application/octet-stream');
    const fields: [string, string][] = [];
    if (opts.folder !== undefined) fields.push(['folder', opts.folder]);
    if (opts.name !== undefined) fields.push(['name', opts.name]);
    fields.push(['content_type', contentType]);
    if (opts.confirm) fields.push(['confirm', 'true']);
    if (opts.upsert) fields.push(['upsert', 'true']);
    if (opts.projectId) fields.push(['project_id', opts.projectId]);
    const xhr = (globalThis as { XMLHttpRequest?: new () => XhrLike }).XMLHttpRequest;
    if (xhr && typeof FormData !== 'undefined')
      return await this.#xhrUpload(xhr, { body, fields, fileName, contentType, opts });
    return await this.#streamUpload({ body, fields, fileName, contentType, opts });
  }

  /** Node and other runtimes without XMLHttpRequest: a multipart body streamed and counted as it goes. */
  async #streamUpload({ body, fields, fileName, contentType, opts }: PreparedUpload): Promise<StorageObject> {
    const boundary = `----tessera-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
    const enc = new TextEncoder();
    const total = sizeOf(body, opts.size);
    const head =
      fields.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(fileName)}"\r\nContent-Type: ${contentType}\r\n\r\n`;
    const iterator = (async function* () {
      yield enc.encode(head);
      let sent = 0;
      opts.onProgress?.(0, total);
      for await (const chunk of chunksOf(body)) {
        yield chunk;
        sent += chunk.byteLength;
        opts.onProgress?.(sent, total);
      }
      yield enc.encode(`\r\n--${boundary}--\r\n`);
    })();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        await iterator.return(undefined);
      },
    });
    const res = await this.#http.request<ResponseOf<'/storage/api/v1/storage/upload', 'post'>>(
      'POST',
      `${BASE}/upload`,
      {
        raw: stream,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        signal: opts.signal,
      },
    );
    return (res as unknown as { object: StorageObject }).object;
  }

  /** Browsers: XMLHttpRequest, whose upload reports progress. */
  async #xhrUpload(
    Xhr: new () => XhrLike,
    { body, fields, fileName, contentType, opts }: PreparedUpload,
  ): Promise<StorageObject> {
    const form = new FormData();
    for (const [k, v] of fields) form.append(k, v);
    let blob: Blob;
    if (typeof Blob !== 'undefined' && body instanceof Blob) blob = body;
    else {
      const parts: Uint8Array[] = [];
      for await (const c of chunksOf(body)) parts.push(c);
      blob = new Blob(parts as BlobPart[], { type: contentType });
    }
    form.append('file', blob, fileName);
    const headers = await this.#http.credentials();
    return await new Promise<StorageObject>((resolve, reject) => {
      const xhr = new Xhr();
      xhr.open('POST', this.#http.href(`${BASE}/upload`));
      for (const [k, v] of Object.entries({ ...this.#http.headers, ...headers, accept: 'application/json' }))
        xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => opts.onProgress?.(e.loaded, e.lengthComputable ? e.total : undefined);
      xhr.onload = () => {
        let parsed: unknown = xhr.responseText;
        try {
          parsed = JSON.parse(xhr.responseText);
        } catch {
          // not JSON
        }
        if (xhr.status >= 200 && xhr.status < 300) resolve((parsed as { object: StorageObject }).object);
        else reject(errorOf(xhr.status, parsed, xhr.getResponseHeader('x-request-id') ?? undefined));
      };
      xhr.onerror = () =>
        reject(new TesseraError({ code: 'NETWORK_ERROR', status: 0, message: 'The upload failed on the way' }));
      xhr.onabort = () => reject(new TesseraError({ code: 'ABORTED', status: 0, message: 'The upload was aborted' }));
      opts.signal?.addEventListener('abort', () => xhr.abort());
      xhr.send(form);
    });
  }

  /** Makes a pending upload ready. */
  async confirm(id: string): Promise<StorageObject> {
    return (await this.#http.request<{ object: StorageObject }>('POST', `${BASE}/upload/confirm`, { body: { id } }))
      .object;
  }

  /** Downloads an object: the Response (stream it, or `.bytes()`, `.blob()`); `range` as `[start, end]` (inclusive). */
  async download(id: string, opts: { range?: [number, number]; signal?: AbortSignal } = {}): Promise<Response> {
    const headers = opts.range ? { range: `bytes=${opts.range[0]}-${opts.range[1]}` } : undefined;
    return await this.#http.request<Response>('GET', `${BASE}/download/${encodeURIComponent(id)}`, {
      headers,
      stream: true,
      signal: opts.signal,
    });
  }

  /** An object's bytes. */
  async downloadBytes(id: string): Promise<Uint8Array> {
    return new Uint8Array(await (await this.download(id)).arrayBuffer());
  }

  /** Objects, one page at a time. */
  async list(
    query: {
      folder?: string;
      recursive?: boolean;
      prefix?: string;
      status?: 'ready' | 'pending';
      sort?: string;
      first?: number;
      after?: string;
      projectId?: string;
    } = {},
  ) {
    const { projectId, ...rest } = query;
    return await this.#http.request<ResponseOf<'/storage/api/v1/storage/objects', 'get'>>('GET', `${BASE}/objects`, {
      query: { ...rest, project_id: projectId },
    });
  }

  /** One object's metadata. */
  async get(id: string): Promise<StorageObject> {
    return (await this.#http.request<{ object: StorageObject }>('GET', `${BASE}/objects/${encodeURIComponent(id)}`))
      .object;
  }

  /** Deletes an object and its bytes. */
  async remove(id: string): Promise<void> {
    await this.#http.request('DELETE', `${BASE}/objects/${encodeURIComponent(id)}`);
  }

  async folders(query: { prefix?: string; first?: number; after?: string; projectId?: string } = {}) {
    const { projectId, ...rest } = query;
    return await this.#http.request<ResponseOf<'/storage/api/v1/storage/folders', 'get'>>('GET', `${BASE}/folders`, {
      query: { ...rest, project_id: projectId },
    });
  }

  async usage() {
    return (await this.#http.request<ResponseOf<'/storage/api/v1/storage/usage', 'get'>>('GET', `${BASE}/usage`)).usage;
  }

  /** ACL policies (the secret key). */
  readonly policies = {
    list: async (): Promise<StoragePolicy[]> =>
      (await this.#http.request<{ policies: StoragePolicy[] }>('GET', `${BASE}/policies`)).policies,
    create: async (policy: BodyOf<'/storage/api/v1/storage/policies', 'post'>): Promise<StoragePolicy> =>
      (await this.#http.request<{ policy: StoragePolicy }>('POST', `${BASE}/policies`, { body: policy })).policy,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/policies/${encodeURIComponent(id)}`)),
  };
}
