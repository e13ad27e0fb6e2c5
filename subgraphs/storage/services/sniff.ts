// What an upload's bytes are, whatever its sender declared: a storage policy's `content_types` is checked against
// the type sniffed from the first bytes (file-type's signatures), so `image/*` means images, not HTML declared as
// `image/png`. Formats file-type cannot recognise (plain text, JSON, CSV, SVG...) keep their declared type — unless
// that type is one it does recognise, in which case the bytes contradict the declaration and the upload is refused.
import type { Readable } from 'node:stream';
import { fileTypeFromBuffer, supportedMimeTypes } from 'file-type';
import { AppError } from '../../../platform/errors.ts';
import { blobKeyOf, type BlobStore } from '../../../platform/blob-store/index.ts';

/** file-type reads at most this many bytes of a file. */
export const SNIFF_BYTES = 4100;

async function head(blobs: BlobStore, projectId: string, id: string, size: number): Promise<Buffer> {
  if (size === 0) return Buffer.alloc(0);
  const stream: Readable = await blobs.get(blobKeyOf(projectId, id), {
    start: 0,
    end: Math.min(size, SNIFF_BYTES) - 1,
  });
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The content type of a stored upload's bytes: the sniffed one, else the declared one when the bytes cannot tell.
 * UNSUPPORTED_MEDIA_TYPE when the declared type is a recognisable format the bytes are not.
 */
export async function sniffedContentType(
  blobs: BlobStore,
  upload: { projectId: string; id: string; size: number; contentType: string },
): Promise<string> {
  const found = await fileTypeFromBuffer(await head(blobs, upload.projectId, upload.id, upload.size));
  if (found) return found.mime;
  const declared = upload.contentType.split(';')[0]!.trim().toLowerCase();
  if (supportedMimeTypes.has(declared as never)) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The bytes are not ${declared}, as the upload declared`, {
      declared,
      sniffed: null,
    });
  }
  return upload.contentType;
}
