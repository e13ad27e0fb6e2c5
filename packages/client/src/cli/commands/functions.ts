// `tessera functions deploy|list|invoke|delete` and `tessera secrets set|list|unset`.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { FunctionInput } from '../../index.ts';
import { arg, confirm, flag, json, type Command } from '../command.ts';
import { CliError, table } from '../output.ts';
import { progressBar } from '../progress.ts';

const DEFINITION = /\.(json|ya?ml)$/i;

/** The function definitions of a file (one object or a list) or of every JSON/YAML file of a folder, by file name. */
export function readDefinitions(target: string): { file: string; def: FunctionInput }[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch {
    throw new CliError(`No such file or folder: ${target}`);
  }
  const files = stat.isDirectory()
    ? fs
        .readdirSync(target)
        .filter((f) => DEFINITION.test(f))
        .sort()
        .map((f) => path.join(target, f))
    : [target];
  if (files.length === 0) throw new CliError(`No .json, .yaml or .yml definitions in ${target}`);
  return files.flatMap((file) => {
    const text = fs.readFileSync(file, 'utf8');
    let value: unknown;
    try {
      value = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
    } catch (err) {
      throw new CliError(`${file}: ${(err as Error).message}`);
    }
    const defs = Array.isArray(value) ? value : [value];
    return defs.map((def, i) => {
      if (!def || typeof def !== 'object' || typeof (def as { name?: unknown }).name !== 'string')
        throw new CliError(`${file}${defs.length > 1 ? ` [${i}]` : ''}: a definition needs a name`);
      return { file, def: def as FunctionInput };
    });
  });
}

export const functions: Command = {
  name: 'functions',
  summary: 'Deploy, list, invoke and delete edge functions',
  usage: [
    'functions deploy <file or folder of JSON/YAML definitions> [--project ID]',
    'functions list',
    'functions invoke <name> [--data JSON | --data-file FILE|-] [--async] [--dry-run]',
    'functions delete <name> [--yes]',
  ],
  async run(ctx, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'deploy') {
      const defs = readDefinitions(arg(args, 1, 'file or folder'));
      const fns = (await ctx.project()).functions;
      const bar = progressBar(ctx.out.io.stderr, {
        label: 'deploying',
        unit: 'items',
        live: ctx.out.io.errTty,
        enabled: ctx.env.TESSERA_PROGRESS === '1' || (ctx.out.io.errTty && !ctx.out.json),
      });
      const done: { name: string; id: string; version: number; created: boolean; file: string }[] = [];
      bar.update(0, defs.length);
      try {
        for (const { file, def } of defs) {
          const r = await fns.deploy(def).catch((err: Error) => {
            throw Object.assign(err, { message: `${path.basename(file)} (${def.name}): ${err.message}` });
          });
          done.push({
            name: r.function.name,
            id: r.function.id,
            version: r.function.version,
            created: r.created,
            file,
          });
          bar.update(done.length, defs.length);
        }
      } finally {
        bar.finish();
      }
      ctx.out.result(done, () =>
        done.map((d) => `${d.created ? 'created' : 'updated'} ${d.name} (version ${d.version})`).join('\n'),
      );
    } else if (sub === 'list') {
      const page = await (await ctx.project()).functions.list({ first: 100 });
      ctx.out.result(page.functions, () =>
        table(
          page.functions.map((f) => ({ ...f, steps: (f.steps as unknown[]).length })),
          ['name', 'id', 'public', 'version', 'steps', 'updated_at'],
        ),
      );
    } else if (sub === 'invoke') {
      const name = arg(args, 1, 'name');
      let input: unknown;
      const data = flag(ctx, 'data');
      const file = flag(ctx, 'data-file');
      if (data !== undefined) input = json(data, '--data');
      else if (file !== undefined)
        input = json(file === '-' ? await ctx.readStdin() : fs.readFileSync(file, 'utf8'), '--data-file');
      const r = await (
        await ctx.project()
      ).functions.invoke(name, input, { async: ctx.flags.async === true, dryRun: ctx.flags['dry-run'] === true });
      ctx.out.result(
        { status: r.status, execution_id: r.executionId ?? null, output: r.data },
        () => `${JSON.stringify(r.data, null, 2)}`,
      );
    } else if (sub === 'delete') {
      const name = arg(args, 1, 'name');
      const fns = (await ctx.project()).functions;
      const fn = await fns.findByName(name);
      if (!fn) throw new CliError(`No function named ${name}`, 5);
      await confirm(ctx, `Delete function ${name} with its hooks, webhooks and cron jobs`);
      await fns.remove(fn.id);
      ctx.out.result({ deleted: fn.id, name }, `Deleted ${name}`);
    } else throw new CliError(`Unknown: functions ${sub}`);
  },
};

export const secrets: Command = {
  name: 'secrets',
  summary: "The project's function secrets (values are write-only)",
  usage: ['secrets list', 'secrets set NAME VALUE | NAME=VALUE | NAME --value-stdin', 'secrets unset NAME'],
  async run(ctx, args) {
    const api = (await ctx.project()).functions.secrets;
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const list = await api.list();
      ctx.out.result(list, () => table(list, ['name', 'updated_at']));
    } else if (sub === 'set') {
      let name = arg(args, 1, 'name');
      let value = args[2];
      if (value === undefined && name.includes('='))
        [name, value] = [name.slice(0, name.indexOf('=')), name.slice(name.indexOf('=') + 1)];
      if (ctx.flags['value-stdin'] === true) value = (await ctx.readStdin()).replace(/\r?\n$/, '');
      if (value === undefined) throw new CliError('Missing <value> (or NAME=VALUE, or --value-stdin)');
      const s = await api.set(name, value);
      ctx.out.result(s, `Set secret ${s.name}`);
    } else if (sub === 'unset') {
      const name = arg(args, 1, 'name');
      await api.unset(name);
      ctx.out.result({ unset: name }, `Removed secret ${name}`);
    } else throw new CliError(`Unknown: secrets ${sub}`);
  },
};
