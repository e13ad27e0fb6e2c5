// `tessera storage ls|cp|rm`: remote paths are written `ts:folder/name` (or an object id, `ts:<id>`).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { StorageObject, TesseraClient } from '../../index.ts';
import { arg, confirm, type Command } from '../command.ts';
import { CliError, EXIT, table } from '../output.ts';
import { progressBar } from '../progress.ts';

const REMOTE = 'ts:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const split = (p: string): { folder: string; name: string } => {
  const i = p.lastIndexOf('/');
  return i < 0 ? { folder: '', name: p } : { folder: p.slice(0, i), name: p.slice(i + 1) };
};

/** The object a remote path names: `ts:<id>` or `ts:folder/name`. */
async function resolve(client: TesseraClient, remote: string): Promise<StorageObject> {
  const p = remote.slice(REMOTE.length).replace(/^\/+/, '');
  if (UUID.test(p)) return await client.storage.get(p);
  const { folder, name } = split(p);
  const page = await client.storage.list({ folder, prefix: name, first: 1000 });
  const found = page.objects.find((o) => o.name === name);
  if (!found) throw new CliError(`No object ${remote}`, EXIT.NOT_FOUND);
  return found;
}

export const storage: Command = {
  name: 'storage',
  summary: "The project's files: list, copy up and down, remove",
  usage: [
    'storage ls [ts:folder] [--recursive]',
    'storage cp <local file> ts:folder/[name] [--upsert]',
    'storage cp ts:folder/name|ts:<id> <local file or ->',
    'storage rm ts:folder/name|ts:<id> [--yes]',
  ],
  async run(ctx, args) {
    const client = await ctx.project();
    const sub = args[0] ?? 'ls';
    if (sub === 'ls') {
      const folder = args[1] === undefined ? undefined : args[1].replace(/^ts:/, '').replace(/^\/+|\/+$/g, '');
      const page = await client.storage.list({ folder, recursive: ctx.flags.recursive === true, first: 1000 });
      ctx.out.result(page.objects, () =>
        table(
          page.objects.map((o) => ({ ...o, path: o.folder ? `${o.folder}/${o.name}` : o.name })),
          ['id', 'path', 'size', 'content_type', 'updated_at'],
        ),
      );
    } else if (sub === 'cp') {
      const [src, dst] = [arg(args, 1, 'source'), arg(args, 2, 'destination')];
      const bar = progressBar(ctx.out.io.stderr, {
        label: 'uploading',
        unit: 'bytes',
        live: ctx.out.io.errTty,
        enabled: ctx.env.TESSERA_PROGRESS === '1' || (ctx.out.io.errTty && !ctx.out.json),
      });
      if (dst.startsWith(REMOTE) && !src.startsWith(REMOTE)) {
        if (!fs.existsSync(src)) throw new CliError(`No such file: ${src}`);
        const remote = dst.slice(REMOTE.length).replace(/^\/+/, '');
        const { folder, name } =
          remote.endsWith('/') || remote === ''
            ? { folder: remote.replace(/\/+$/, ''), name: path.basename(src) }
            : split(remote);
        const size = fs.statSync(src).size;
        try {
          const obj = await client.storage.upload(
            Readable.toWeb(fs.createReadStream(src)) as ReadableStream<Uint8Array>,
            {
              folder,
              name,
              size,
              confirm: true,
              upsert: ctx.flags.upsert === true,
              onProgress: (sent, total) => bar.update(sent, total),
            },
          );
          bar.finish();
          ctx.out.result(
            obj,
            `Uploaded ${src} to ts:${obj.folder ? `${obj.folder}/` : ''}${obj.name} (${obj.id}, ${obj.size} bytes)`,
          );
        } finally {
          bar.finish();
        }
      } else if (src.startsWith(REMOTE) && !dst.startsWith(REMOTE)) {
        const obj = await resolve(client, src);
        const res = await client.storage.download(obj.id);
        if (dst === '-') {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) process.stdout.write(chunk);
          return;
        }
        const target = fs.existsSync(dst) && fs.statSync(dst).isDirectory() ? path.join(dst, obj.name) : dst;
        await fs.promises.writeFile(target, Readable.fromWeb(res.body as never));
        ctx.out.result(
          { ...obj, saved_to: target },
          `Downloaded ts:${obj.folder ? `${obj.folder}/` : ''}${obj.name} to ${target} (${obj.size} bytes)`,
        );
      } else throw new CliError('One side of cp must be a local file and the other a ts: path');
    } else if (sub === 'rm') {
      const target = arg(args, 1, 'ts:path');
      if (!target.startsWith(REMOTE)) throw new CliError('rm takes a ts: path or ts:<object id>');
      const obj = await resolve(client, target);
      await confirm(ctx, `Delete ts:${obj.folder ? `${obj.folder}/` : ''}${obj.name}`);
      await client.storage.remove(obj.id);
      ctx.out.result({ deleted: obj.id }, `Deleted ${obj.id}`);
    } else throw new CliError(`Unknown: storage ${sub}`);
  },
};
