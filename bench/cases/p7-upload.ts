// P7: a 1 GiB file (128 MiB with --quick) uploaded through POST /storage/api/v1/storage/upload (multipart,
// X-Api-Key) against `cp` of the same file on the same disk. Figures: Tessera's MB/s from the first byte sent
// to the 201, the peak RSS of the Tessera process during the upload (VmHWM, reset before the upload through
// /proc/<pid>/clear_refs, and VmRSS sampled every 20 ms when that reset is not allowed), and cp's MB/s.
// Neither side syncs to disk: Tessera's blob store does not fsync, and neither does cp.
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { client } from '../../tests/support/http.ts';
import type { BenchContext, CustomCase, CustomFigures } from './types.ts';

const MIB = 1024 * 1024;
const MB = 1e6;
const STORAGE = '/storage/api/v1/storage';
const BOUNDARY = '----tessera-bench-p7-3b9c1e';
const GOAL_RATIO = 0.5;
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

/** Streams `file` as the `file` part of a multipart upload with node:http (exact Content-Length). */
async function uploadFile(base: string, apiKey: string, file: string, size: number): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="confirm"\r\n\r\ntrue\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="folder"\r\n\r\nbench\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="p7-${Date.now()}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const url = new URL(`${base}${STORAGE}/upload`);
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { 'x-api-key': apiKey, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(head.length + size + tail.length) },
  });
  const answered = new Promise<{ status: number; body: any }>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
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
  const email = `bench-p7-${Date.now()}@example.com`;
  const password = 'bench password 123';
  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  // Plans are assigned by the operator (no API): move the tenant to the pro plan as an operator would.
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    await db.query(`update tenants set plan_id = 'pro' where email = $1`, [email]);
  } finally {
    await db.end();
  }
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  const created = await call('POST', '/auth/api/v1/projects', { token: login.body.access_token as string, body: { name: 'bench-p7' } });
  if (created.status !== 201) throw new Error(`project: ${created.status} ${JSON.stringify(created.body)}`);
  const apiKey = created.body.project.api_key as string;
  const usage = await call('GET', `${STORAGE}/usage`, { apiKey });
  const u = usage.body?.usage;
  if (usage.status !== 200 || !(u.max_upload_bytes >= size && u.remaining_bytes >= size)) {
    throw new Error(`the project cannot take a ${size}-byte upload: ${usage.status} ${JSON.stringify(usage.body)}`);
  }
  return apiKey;
}

export const p7: CustomCase = {
  kind: 'custom',
  id: 'P7-upload',
  title: 'Storage: 1 GiB multipart upload POST /storage/api/v1/storage/upload (API key; --quick: 128 MiB)',
  peer: 'cp of the same file on the same disk',
  goal: 'peak RSS <= 200 MB and >= 0.5x cp',
  async setup(ctx) {
    const size = (ctx.quick ? 128 : 1024) * MIB;
    const dir = fs.mkdtempSync(path.join(ctx.outDir, 'p7-'));
    const cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    try {
      const src = path.join(dir, 'source.bin');
      const sha256 = await writeFile(src, size);
      const apiKey = await proProject(ctx, size);
      const call = client(ctx.tessera);
      const uploadOnce = async (file: string, bytes: number) => {
        const r = await uploadFile(ctx.tessera, apiKey, file, bytes);
        if (r.status !== 201) throw new Error(`upload: ${r.status} ${JSON.stringify(r.body)}`);
        return r.body.object as { id: string; size: number; sha256: string };
      };
      const remove = async (id: string) => {
        const r = await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey });
        if (r.status !== 204) throw new Error(`delete: ${r.status} ${JSON.stringify(r.body)}`);
      };
      // Warm-up: the upload path compiled and its pools open before anything is measured.
      const warm = path.join(dir, 'warm.bin');
      await writeFile(warm, 8 * MIB);
      await remove((await uploadOnce(warm, 8 * MIB)).id);

      const run = async (): Promise<CustomFigures> => {
        // The peer first: cp of the same file, its copy removed straight after.
        const dst = path.join(dir, 'copy.bin');
        const cpSeconds = await cp(src, dst);
        fs.rmSync(dst, { force: true });

        await new Promise((r) => setTimeout(r, 200));
        const pid = ctx.tesseraPid;
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
        let object;
        try {
          object = await uploadOnce(src, size);
        } finally {
          clearInterval(sampler);
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const peak = Math.max(sampled, statusField(pid, 'VmRSS'), hwmReset ? statusField(pid, 'VmHWM') : 0);
        if (object.size !== size || object.sha256 !== sha256) {
          throw new Error(`the stored object differs from the file: ${object.size} bytes, sha256 ${object.sha256} (expected ${size}, ${sha256})`);
        }
        await remove(object.id);

        const tessera = {
          mbps: +(size / MB / seconds).toFixed(1),
          peak_rss_mb: +(peak / MB).toFixed(1),
          baseline_rss_mb: +(baseline / MB).toFixed(1),
          rss_growth_mb: +((peak - baseline) / MB).toFixed(1),
          seconds: +seconds.toFixed(2),
        };
        const peer = { mbps: +(size / MB / cpSeconds).toFixed(1), seconds: +cpSeconds.toFixed(2) };
        const ratio = tessera.mbps / peer.mbps;
        return { tessera, peer, ratio, met: ratio >= GOAL_RATIO && tessera.peak_rss_mb <= GOAL_PEAK_RSS_MB };
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
    const tessera = {
      mbps: med(rounds.map((r) => r.tessera.mbps!)),
      peak_rss_mb: Math.max(...rounds.map((r) => r.tessera.peak_rss_mb!)),
      baseline_rss_mb: med(rounds.map((r) => r.tessera.baseline_rss_mb!)),
      rss_growth_mb: Math.max(...rounds.map((r) => r.tessera.rss_growth_mb!)),
      seconds: med(rounds.map((r) => r.tessera.seconds!)),
    };
    const peer = { mbps: med(rounds.map((r) => r.peer.mbps!)), seconds: med(rounds.map((r) => r.peer.seconds!)) };
    const ratio = med(rounds.map((r) => r.ratio));
    return { tessera, peer, ratio, met: ratio >= GOAL_RATIO && tessera.peak_rss_mb <= GOAL_PEAK_RSS_MB };
  },
};
