// The upload floor of P7: a bare node:http server that streams the `file` part of a multipart upload to a file with
// busboy (the parser Tessera's storage uses) and answers its size and sha256, as plain as such a handler is written:
// no authentication, no quota, no metadata row, default stream buffers, no fsync (neither does Tessera's blob store).
// POST /upload → 201 {file, size, sha256}; DELETE /upload?file=<name> removes one. Files land in UPLOAD_DIR (the
// harness puts it on the disk Tessera's blobs land on).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';

const dir = process.env.UPLOAD_DIR!;
const port = Number(process.env.PORT ?? 0);
let seq = 0;

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function upload(req: http.IncomingMessage, res: http.ServerResponse): void {
  const bb = busboy({ headers: req.headers });
  let stored: Promise<{ file: string; size: number; sha256: string }> | undefined;
  bb.on('file', (_name, stream) => {
    if (stored) {
      stream.resume();
      return;
    }
    const file = `upload-${process.pid}-${++seq}.bin`;
    const hash = crypto.createHash('sha256');
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
    });
    stored = pipeline(stream, fs.createWriteStream(path.join(dir, file))).then(() => ({
      file,
      size,
      sha256: hash.digest('hex'),
    }));
  });
  bb.once('close', () => {
    if (!stored) return answer(res, 400, { error: 'no file part' });
    stored.then(
      (r) => answer(res, 201, r),
      (err: Error) => answer(res, 500, { error: err.message }),
    );
  });
  bb.once('error', (err: Error) => answer(res, 400, { error: err.message }));
  req.pipe(bb);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname !== '/upload') return answer(res, 404, { error: 'not found' });
  if (req.method === 'POST') return upload(req, res);
  if (req.method === 'DELETE') {
    const name = url.searchParams.get('file') ?? '';
    if (!/^upload-\d+-\d+\.bin$/.test(name)) return answer(res, 400, { error: 'bad file name' });
    fs.rm(path.join(dir, name), { force: true }, () => res.writeHead(204).end());
    return;
  }
  answer(res, 405, { error: 'method not allowed' });
});
server.listen(port, '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening ${addr.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
