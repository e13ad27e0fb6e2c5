// The byte paths of storage, which GraphQL cannot carry: the multipart upload streams the file part
// straight into the blob store (never whole in memory) and the download streams it back with ranges and
// validators. Everything else (policies, names, limits, quota, object records) is decided by the storage
// subgraph through its operations: `_beginStorageUpload` before the first byte, `_completeStorageUpload`
// after the last (internal, @inaccessible: only the front door can run them).
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors } from '../../platform/errors.ts';
import type { RequestContext } from '../../platform/auth.ts';
import {
  BlobNotFoundError,
  BlobTooLargeError,
  blobKeyOf,
  describeStore,
  openBlobStore,
  readStoreId,
  type BlobStore,
} from '../../platform/blob-store/index.ts';
import { ConfigError } from '../../platform/config.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../platform/internal-operations.ts';
import { contentDisposition, parseRange, etagMatches } from './storage/http.ts';
import type { RawHandlerDeps, RawHandlerModule } from './types.ts';

const BASE = '/storage/api/v1/storage';
const TAG = 'Storage';

/** Form fields (or query parameters) an upload understands. */
const UPLOAD_FIELDS = ['folder', 'name', 'content_type', 'confirm', 'upsert', 'project_id'];

function flag(field: string, v: string | undefined): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  if (/^(true|1|yes)$/i.test(v)) return true;
  if (/^(false|0|no)$/i.test(v)) return false;
  throw errors.validation(field, `expected true or false, got "${v.slice(0, 20)}"`);
}

/** The request's Content-Length, when it has one. */
function declaredLength(req: FastifyRequest): number | undefined {
  const raw = req.headers['content-length'];
  const n = typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Streams the multipart request's `file` part into the blob store; answers the recorded object. */
async function receiveUpload(
  req: FastifyRequest,
  deps: RawHandlerDeps,
  blobs: BlobStore,
  ctx: RequestContext,
): Promise<Record<string, unknown>> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the upload as multipart/form-data with a `file` part (and optional folder, name, content_type fields before it)',
    );
  }
  const fields: Record<string, string> = {};
  for (const key of UPLOAD_FIELDS) {
    const v = (req.query as Record<string, unknown>)[key];
    if (typeof v === 'string') fields[key] = v;
  }
  let bb: busboy.Busboy;
  try {
    // preservePath: a file name such as `../x` reaches the name checks (and is refused) instead of being cut to `x`.
    bb = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      preservePath: true,
      limits: { files: 1, fields: 20, parts: 21, fieldSize: 64 * 1024, fieldNameSize: 100 },
    });
  } catch (err) {
    throw errors.badRequest(`Malformed multipart request: ${(err as Error).message}`);
  }

  return await new Promise<Record<string, unknown>>((resolve, reject) => {
    let settled = false;
    let fileSeen = false;
    let parsed = false;
    let stored: Record<string, unknown> | undefined;
    let current: Readable | undefined;
    const finish = () => {
      if (!settled && parsed && stored) {
        settled = true;
        resolve(stored);
      }
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      // Stop parsing; Node discards the rest of the body once the answer is sent.
      req.raw.unpipe(bb);
      req.raw.resume();
      // A file still streaming into the blob store is cut off, so its upload is aborted and forgotten.
      // (With an error: busboy's part streams emit no 'close', so only an error ends a pipeline reading one.)
      current?.destroy(new Error('upload cancelled'));
      reject(err);
    };

    const store = async (file: Readable, info: busboy.FileInfo): Promise<void> => {
      // A visitor naming a suspended project (a credential of one was refused before this).
      if (ctx.principal.kind === 'anonymous') await deps.checkProject(fields.project_id);
      const input = {
        projectId: fields.project_id,
        folder: fields.folder,
        name: fields.name ?? info.filename,
        contentType:
          fields.content_type ??
          (info.mimeType && info.mimeType !== 'application/octet-stream' ? info.mimeType : undefined),
        confirm: flag('confirm', fields.confirm),
        upsert: flag('upsert', fields.upsert),
        // The file cannot be larger than the request: the quota reserved while it streams need not be either.
        sizeHint: declaredLength(req),
      };
      const { _beginStorageUpload: ticket } = await callInternal(
        deps,
        INTERNAL_OPERATIONS.storageUploadBegin,
        { input },
        ctx,
      );
      let put;
      try {
        // The file part's chunks are busboy's views of the HTTP parser's own copies of the body: nothing else keeps them.
        put = await blobs.put(blobKeyOf(ticket.projectId, ticket.id), file, {
          maxBytes: ticket.maxBytes,
          releaseChunks: true,
        });
      } catch (err) {
        await callInternal(deps, INTERNAL_OPERATIONS.storageUploadAbort, { id: ticket.id }, ctx).catch(() => {});
        if (err instanceof BlobTooLargeError) throw errors.uploadTooLarge(ticket);
        throw err;
      }
      const done = await callInternal(
        deps,
        INTERNAL_OPERATIONS.storageUploadComplete,
        { id: ticket.id, size: put.size, sha256: put.sha256 },
        ctx,
      );
      stored = done.object;
      finish();
    };

    bb.on('field', (name, value, info) => {
      if (fileSeen)
        return fail(
          errors.badRequest(`Field "${name.slice(0, 40)}" came after the file: send the fields before the file part`),
        );
      if (info.valueTruncated) return fail(errors.validation(name.slice(0, 40), 'is too long'));
      if (UPLOAD_FIELDS.includes(name)) fields[name] = value;
    });
    bb.on('file', (name, file, info) => {
      // Errors of the part surface through the blob store's pipeline (or do not matter once we failed).
      file.on('error', () => {});
      if (settled) return file.resume();
      if (name !== 'file') {
        file.resume();
        return fail(
          errors.badRequest(`Unexpected file part "${name.slice(0, 40)}": the file goes in a part named "file"`),
        );
      }
      fileSeen = true;
      current = file;
      store(file, info).catch((err: unknown) => {
        file.resume();
        fail(err);
      });
    });
    bb.on('filesLimit', () => fail(errors.badRequest('Send exactly one file part per upload')));
    bb.on('fieldsLimit', () => fail(errors.badRequest('Too many form fields')));
    bb.on('partsLimit', () => fail(errors.badRequest('Too many form parts')));
    bb.on('error', (err: Error) => fail(errors.badRequest(`Malformed multipart request: ${err.message}`)));
    bb.on('close', () => {
      parsed = true;
      if (!fileSeen) fail(errors.validation('file', 'is required: the multipart body has no part named "file"'));
      else finish();
    });
    req.raw.on('close', () => {
      if (!req.raw.complete) fail(errors.badRequest('The client went away during the upload'));
    });
    req.raw.pipe(bb);
  });
}

/** Streams an object's bytes: ETag/If-None-Match, Last-Modified, Range (one range) and Content-Disposition. */
async function sendDownload(
  req: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  deps: RawHandlerDeps,
  blobs: BlobStore,
  ctx: RequestContext,
) {
  const { object } = await callInternal(deps, INTERNAL_OPERATIONS.storageDownload, { id: req.params.id }, ctx);
  // A public object of a suspended project (a credential of it was refused before this).
  await deps.checkProject(object.projectId);
  if (object.status !== 'ready' || !object.sha256) throw errors.notFound('object', object.id);
  const etag = `"${object.sha256}"`;
  const size = object.size;
  void reply
    .header('etag', etag)
    .header('last-modified', new Date(object.updatedAt).toUTCString())
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, no-cache')
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', contentDisposition(object.name));
  if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send();
  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : undefined;
  if (range === 'unsatisfiable') {
    void reply.header('content-range', `bytes */${size}`);
    throw new AppError(
      'RANGE_NOT_SATISFIABLE',
      `The range ${String(req.headers.range).slice(0, 60)} is outside the ${size} bytes of the object`,
      { size },
    );
  }
  let stream: Readable;
  try {
    stream = await blobs.get(blobKeyOf(object.projectId, object.id), range ?? undefined);
  } catch (err) {
    if (err instanceof BlobNotFoundError) {
      req.log.warn({ object: object.id }, 'object without bytes');
      throw errors.notFound('object', object.id);
    }
    throw err;
  }
  void reply.type(object.contentType);
  if (range) {
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', String(range.end - range.start + 1))
      .send(stream);
  }
  return reply.code(200).header('content-length', String(size)).send(stream);
}

/** How long a starting front door waits for a storage instance to say which blob store it uses before starting anyway. */
const STORE_CHECK_AT_START_MS = 15_000;
/** Then, how often it asks again in the background until one answers. */
const STORE_CHECK_RETRY_MS = 5_000;

/**
 * Checks that this front door's blob store is the storage subgraph's (platform/blob-store/identity.ts): the storage
 * subgraph answers the id kept in its store, this store must hold the same. A different store throws ConfigError
 * (the process refuses to start, saying which store it opened). A storage subgraph not answering within
 * STORE_CHECK_AT_START_MS (parallel starts across hosts) does not hold the front door back: the check goes on in the
 * background (until the answer, or the returned stop), and a mismatch found then makes every upload and download
 * answer 503 (the log names the store; callers are told nothing of the infrastructure).
 */
async function verifyBlobStore(
  blobs: BlobStore,
  deps: RawHandlerDeps,
  onMismatch: (message: string) => void,
): Promise<() => void> {
  const ctx: RequestContext = { requestId: 'front-door-start:blob-store', principal: { kind: 'internal' } };
  const compare = async (): Promise<string | undefined> => {
    for (let attempt = 0; ; attempt++) {
      const { _blobStoreId: theirs } = await callInternal(deps, INTERNAL_OPERATIONS.storageBlobStoreId, {}, ctx);
      const mine = await readStoreId(blobs);
      if (mine === theirs) return undefined;
      // Storage instances starting on a new store at once: the last id written wins; ask again once.
      if (attempt === 1)
        return `TESSERA_STORAGE_DRIVER / TESSERA_S3_* / TESSERA_STORAGE_DIR: this front door's blob store (${describeStore(deps.config)}) is not the storage subgraph's (its store id ${theirs}, this store's ${mine ?? 'none'}). The front door streams object bytes itself: give every front door the same blob store settings as the storage instances (an S3 bucket when they run on several hosts).`;
    }
  };
  const deadline = Date.now() + STORE_CHECK_AT_START_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const problem = await compare();
      if (problem) throw new ConfigError([problem]);
      deps.logger.info({ store: describeStore(deps.config) }, "storage: the blob store is the storage subgraph's");
      return () => {};
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      lastError = err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  deps.logger.warn(
    { err: lastError },
    'storage: no storage instance answered which blob store it uses; starting, and checking again in the background',
  );
  const again = setInterval(() => {
    compare().then(
      (problem) => {
        clearInterval(again);
        if (problem) {
          deps.logger.error(problem);
          onMismatch(problem);
        } else deps.logger.info("storage: the blob store is the storage subgraph's");
      },
      () => {}, // still no storage instance: the next round asks again
    );
  }, STORE_CHECK_RETRY_MS);
  again.unref();
  return () => clearInterval(again);
}

/** What callers are told while this front door's blob store is not the storage subgraph's (the log says which). */
const WRONG_STORE = "this front door's blob store is not the storage subgraph's: its operator must fix its settings";

/** A download's bytes: any media type (the object's own). */
const BYTES = { '*/*': { schema: { type: 'string', format: 'binary' } } };

const errorRefs = (codes: string[]) =>
  Object.fromEntries(codes.map((c) => [c, { $ref: `#/components/responses/E${c}` }]));

export const storageHandlers: RawHandlerModule = {
  name: 'storage',
  register: async (app: FastifyInstance, deps: RawHandlerDeps) => {
    const blobs = openBlobStore(deps.config);
    app.addHook('onClose', async () => blobs.close());
    let wrongStore: string | undefined;
    const stopChecking = await verifyBlobStore(blobs, deps, (message) => (wrongStore = message));
    app.addHook('onClose', async () => stopChecking());
    await app.register(async (scope) => {
      // Multipart bodies are streamed by the handler: nothing may read them first.
      if (!scope.hasContentTypeParser('multipart/form-data'))
        scope.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
      const fail = (reply: FastifyReply, err: unknown) => deps.sendError(reply, err);

      scope.post(`${BASE}/upload`, async (req, reply) => {
        req.log = req.log.child({ operation: 'storage.upload' });
        try {
          if (wrongStore) throw errors.unavailable(WRONG_STORE);
          const ctx = await deps.contextOf(req);
          const object = await receiveUpload(req, deps, blobs, ctx);
          return reply.code(201).send({ object });
        } catch (err) {
          return fail(reply, err);
        }
      });

      scope.get<{ Params: { id: string } }>(`${BASE}/download/:id`, async (req, reply) => {
        req.log = req.log.child({ operation: 'storage.download' });
        try {
          if (wrongStore) throw errors.unavailable(WRONG_STORE);
          return await sendDownload(req, reply, deps, blobs, await deps.contextOf(req));
        } catch (err) {
          return fail(reply, err);
        }
      });
    });
  },
  openapi: {
    [`${BASE}/upload`]: {
      post: {
        operationId: 'storage.upload',
        // A project key, an end-user token, or nothing where a public policy allows it.
        security: [{ apiKey: [] }, { bearerAuth: [] }, {}],
        summary: 'Upload a file, multipart body',
        description:
          'multipart/form-data: optional fields `folder`, `name` (default: the file name), `content_type` (default: the part type), `confirm` (true: ready at once), `upsert` (replace an object of the same path), `project_id` (anonymous callers), then the `file` part. Fields may also be query parameters. The file streams into the blob store; the object is `pending` until confirmed (POST /upload/confirm). 413 PAYLOAD_TOO_LARGE past the largest upload, 413 QUOTA_EXCEEDED past the quota, 409 CONFLICT when the path exists, 415 when a policy refuses the content type.',
        tags: [TAG],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['file'],
                properties: {
                  folder: { type: 'string' },
                  name: { type: 'string' },
                  content_type: { type: 'string' },
                  confirm: { type: 'boolean' },
                  upsert: { type: 'boolean' },
                  project_id: { type: 'string' },
                  file: { type: 'string', format: 'binary' },
                },
              },
            },
          },
        },
        responses: {
          '201': {
            description: 'The object `{"object": {...}}`',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['object'], properties: { object: { type: 'object' } } },
              },
            },
          },
          ...errorRefs(['400', '401', '403', '404', '409', '413', '415', '500']),
        },
      },
    },
    [`${BASE}/download/{id}`]: {
      get: {
        operationId: 'storage.download',
        security: [{ apiKey: [] }, { bearerAuth: [] }, {}],
        summary: 'Download a file',
        description:
          'Streams the bytes with Content-Type, Content-Length, ETag, Last-Modified and Content-Disposition. `Range: bytes=a-b` answers 206 (one range; 416 when outside the file); `If-None-Match` with the ETag answers 304. Needs `read` on its folder (a public policy allows anonymous downloads).',
        tags: [TAG],
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'The bytes, with the content type stored for the object', content: BYTES },
          '206': { description: 'The requested range', content: BYTES },
          '304': { description: 'Not modified' },
          ...errorRefs(['400', '401', '403', '404', '416', '500']),
        },
      },
    },
  },
};
