// P7: a 1 GiB file (32 MiB with --quick) uploaded through POST /storage/api/v1/storage/upload (multipart,
// X-Api-Key) against the upload floor: a bare node:http server streaming the same multipart upload to a file with
// busboy and answering its sha256 (bench/peers/upload-floor.ts), sent by the same client code from the same file,
// written on the same disk. `cp` of the same file is reported as a reference (it copies inside the kernel, no fair
// floor for an HTTP upload). Figures: MB/s from the first byte sent to the answer, the peak RSS of each server
// process during its upload (VmHWM, reset before the upload through /proc/<pid>/clear_refs, and VmRSS sampled every
// 20 ms when that reset is not allowed). Nobody syncs to disk: Tessera's blob store does not fsync, nor does the
// floor, nor cp.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { client } from '../../tests/support/http.ts';
import { planProject } from '../lib/tenant.ts';
import type { BenchContext, CustomCase, CustomFigures } from './types.ts';

const MIB = 1024 * 1024;
const MB = 1e6;
const STORAGE = '/storage/api/v1/storage';
const BOUNDARY = '----tessera-bench-p7-3b9c1e';
const GOAL_RATIO = 0.8;
const GOAL_PEAK_RSS_MB = 200;

/** Writes `size` bytes (a random 1 MiB block repeated) to `file`; answers their sha256. */
async function writeFile(file: string, size: number): Promise<string> {
  const block = crypto.randomBytes(MIB);
  const hash = crypto.createHash('sha256');
  async function* gen(): AsyncGenerator<Buffer> {
    for (let left = size; left > 0; left -= MIB) {
      const chunk = left >= MIB ? block : block.subarray(0, left);
      hash.update(chunk);
      yield chunk;
    }
  }
  await pipeline(Readable.from(gen()), fs.createWriteStream(file, { flags: 'wx' }));
  return hash.digest('hex');
}

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Resets the process's VmHWM to its current RSS (Linux: clear_refs 5); false when not allowed. */
function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Streams `file` as the `file` part of a multipart upload to `url` with node:http (exact Content-Length). */
async function uploadFile(
  url: URL,
  headers: Record<string, string>,
  file: string,
  size: number,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="confirm"\r\n\r\ntrue\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="folder"\r\n\r\nbench\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="p7-${Date.now()}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: {
      ...headers,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': String(head.length + size + tail.length),
    },
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  async function* body(): AsyncGenerator<Buffer> {
    yield head;
    for await (const chunk of fs.createReadStream(file, { highWaterMark: MIB })) yield chunk as Buffer;
    yield tail;
  }
  // An early answer (413, 401...) cuts the body short: the answer is what counts then.
  const sent = pipeline(Readable.from(body()), req).catch((err: unknown) => err);
  const res = await answered;
  await sent;
  return res;
}

/** Runs `cp src dst`; answers the seconds it took. */
async function cp(src: string, dst: string): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('cp', [src, dst], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`cp exited ${code}: ${err}`))));
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** A tenant on the pro plan (5 GiB per upload, 100 GiB quota) with a project; answers its API key. */
async function proProject(ctx: BenchContext, size: number): Promise<string> {
  const call = client(ctx.tessera);
  const { apiKey } = await planProject(ctx, 'pro', 'p7');
  const usage = await call('GET', `${STORAGE}/usage`, { apiKey });
  const u = usage.body?.usage;
  if (usage.status !== 200 || !(u.max_upload_bytes >= size && u.remaining_bytes >= size)) {
    throw new Error(`the project cannot take a ${size}-byte upload: ${usage.status} ${JSON.stringify(usage.body)}`);
  }
  return apiKey;
}

/** Runs `upload` while watching process `pid`: seconds from start to answer, and the peak RSS with its baseline. */
async function watched<T>(
  pid: number,
  upload: () => Promise<T>,
): Promise<{ result: T; seconds: number; peak: number; baseline: number }> {
  await new Promise((r) => setTimeout(r, 200));
  const baseline = statusField(pid, 'VmRSS');
  const hwmReset = resetPeak(pid);
  let sampled = baseline;
  const sampler = setInterval(() => {
    try {
      sampled = Math.max(sampled, statusField(pid, 'VmRSS'));
    } catch {
      // the process went away: the upload fails and says so
    }
  }, 20);
  const started = process.hrtime.bigint();
  let result: T;
  try {
    result = await upload();
  } finally {
    clearInterval(sampler);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const peak = Math.max(sampled, statusField(pid, 'VmRSS'), hwmReset ? statusField(pid, 'VmHWM') : 0);
  return { result, seconds, peak, baseline };
}

const mb = (bytes: number) => +(bytes / MB).toFixed(1);
const met = (ratio: number, peakRssMb: number) => ratio >= GOAL_RATIO && peakRssMb <= GOAL_PEAK_RSS_MB;

export const p7: CustomCase = {
  kind: 'custom',
  id: 'P7-upload',
  title: 'Storage: 1 GiB multipart upload POST /storage/api/v1/storage/upload (API key; --quick: 32 MiB)',
  peer: 'upload floor: bare node:http + busboy streaming the same upload to a file and answering its sha256 (same client, file, disk); cp of the file as a reference',
  goal: 'peak RSS <= 200 MB and >= 0.8x the upload floor',
  async setup(ctx) {
    const size = (ctx.quick ? 32 : 1024) * MIB;
    const dir = fs.mkdtempSync(path.join(ctx.outDir, 'p7-'));
    const cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    try {
      const src = path.join(dir, 'source.bin');
      const sha256 = await writeFile(src, size);
      const apiKey = await proProject(ctx, size);
      const floorDir = path.join(dir, 'floor');
      fs.mkdirSync(floorDir);
      const floor = await ctx.spawnPeer(
        [path.join(import.meta.dirname, '..', 'peers', 'upload-floor.ts')],
        { PORT: '0', UPLOAD_DIR: floorDir },
        /listening (\d+)/,
      );
      const floorBase = `http://127.0.0.1:${/listening (\d+)/.exec(floor.output())![1]}`;
      const call = client(ctx.tessera);
      const uploadOnce = async (file: string, bytes: number) => {
        const r = await uploadFile(new URL(`${ctx.tessera}${STORAGE}/upload`), { 'x-api-key': apiKey }, file, bytes);
        if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.object as { id: string; size: number; sha256: string };
      };
      const remove = async (id: string) => {
        const r = await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey });
        if (r.status !== 204) throw new Error(`delete: ${r.status} ${JSON.stringify(r.body)}`);
      };
      const floorUpload = async (file: string, bytes: number) => {
        const r = await uploadFile(new URL(`${floorBase}/upload`), {}, file, bytes);
        if (r.status !== 201) throw new Error(`floor upload: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body as { file: string; size: number; sha256: string };
      };
      const floorRemove = async (file: string) => {
        const r = await fetch(`${floorBase}/upload?file=${encodeURIComponent(file)}`, { method: 'DELETE' });
        if (r.status !== 204) throw new Error(`floor delete: ${r.status}`);
      };
      // Warm-up: both upload paths compiled and Tessera's pools open before anything is measured.
      const warm = path.join(dir, 'warm.bin');
      await writeFile(warm, 8 * MIB);
      await remove((await uploadOnce(warm, 8 * MIB)).id);
      await floorRemove((await floorUpload(warm, 8 * MIB)).file);

      const run = async (): Promise<CustomFigures> => {
        // The reference first: cp of the same file, its copy removed straight after.
        const dst = path.join(dir, 'copy.bin');
        const cpSeconds = await cp(src, dst);
        fs.rmSync(dst, { force: true });

        // The floor, then Tessera: the same file from the same client code, each answer checked.
        const f = await watched(floor.child.pid!, () => floorUpload(src, size));
        if (f.result.size !== size || f.result.sha256 !== sha256)
          throw new Error(`the floor stored another file: ${f.result.size} bytes, sha256 ${f.result.sha256}`);
        await floorRemove(f.result.file);
        const t = await watched(ctx.tesseraPid, () => uploadOnce(src, size));
        if (t.result.size !== size || t.result.sha256 !== sha256) {
          throw new Error(
            `the stored object differs from the file: ${t.result.size} bytes, sha256 ${t.result.sha256} (expected ${size}, ${sha256})`,
          );
        }
        await remove(t.result.id);

        const tessera = {
          mbps: +(size / MB / t.seconds).toFixed(1),
          peak_rss_mb: mb(t.peak),
          baseline_rss_mb: mb(t.baseline),
          rss_growth_mb: mb(t.peak - t.baseline),
          seconds: +t.seconds.toFixed(2),
        };
        const peer = {
          mbps: +(size / MB / f.seconds).toFixed(1),
          peak_rss_mb: mb(f.peak),
          rss_growth_mb: mb(f.peak - f.baseline),
          seconds: +f.seconds.toFixed(2),
          cp_mbps: +(size / MB / cpSeconds).toFixed(1),
        };
        const ratio = tessera.mbps / peer.mbps;
        return { tessera, peer, ratio, met: met(ratio, tessera.peak_rss_mb) };
      };
      return { run, cleanup };
    } catch (err) {
      await cleanup();
      throw err;
    }
  },
  // Medians of the rates, but the highest peak of any round: the memory goal holds for every upload.
  summarize(rounds) {
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const fold = (side: 'tessera' | 'peer') => {
      const out: Record<string, number> = {};
      for (const key of Object.keys(rounds[0]![side])) {
        const xs = rounds.map((r) => r[side][key]!);
        out[key] = key === 'peak_rss_mb' || key === 'rss_growth_mb' ? Math.max(...xs) : med(xs);
      }
      return out;
    };
    const tessera = fold('tessera');
    const ratio = med(rounds.map((r) => r.ratio));
    return { tessera, peer: fold('peer'), ratio, met: met(ratio, tessera.peak_rss_mb!) };
  },
};
