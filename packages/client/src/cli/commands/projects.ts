// `tessera projects list|create|rename|delete|use`, `tessera keys show|regenerate`, `tessera clients ...`.
import { arg, confirm, flag, type Command } from '../command.ts';
import { readCredentials, writeCredentials } from '../config.ts';
import { CliError, EXIT, table } from '../output.ts';

export const projects: Command = {
  name: 'projects',
  summary: 'List, create, rename, delete projects; choose the default one',
  usage: [
    'projects list',
    'projects create <name>',
    'projects rename <id> <name>',
    'projects delete <id> [--yes]',
    'projects use <id>',
  ],
  async run(ctx, args) {
    const api = ctx.tenant().tenant;
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const list = await api.projects.list();
      const current = readCredentials(ctx.env)?.project;
      ctx.out.result(list, () =>
        table(
          list.map((p) => ({ ...p, default: p.id === current ? '*' : '' })),
          ['default', 'id', 'name', 'api_key_prefix', 'publishable_key_prefix', 'created_at'],
        ),
      );
    } else if (sub === 'create') {
      const p = await api.projects.create(arg(args, 1, 'name'));
      ctx.out.result(
        p,
        `Created project ${p.name} (${p.id})\n  secret key:      ${p.api_key}\n  publishable key: ${p.publishable_key}`,
      );
    } else if (sub === 'rename') {
      const p = await api.projects.rename(arg(args, 1, 'id'), arg(args, 2, 'name'));
      ctx.out.result(p, `Renamed ${p.id} to ${p.name}`);
    } else if (sub === 'delete') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Delete project ${id} with its database, files, functions and users`);
      await api.projects.remove(id);
      ctx.out.result({ deleted: id }, `Deleted project ${id}`);
    } else if (sub === 'use') {
      const p = await api.projects.get(arg(args, 1, 'id'));
      const creds = readCredentials(ctx.env)!;
      writeCredentials({ ...creds, project: p.id }, ctx.env);
      ctx.out.result({ project: p.id }, `Using project ${p.name} (${p.id})`);
    } else throw new CliError(`Unknown: projects ${sub}`);
  },
};

export const keys: Command = {
  name: 'keys',
  summary: "Show or regenerate the project's keys (secret and publishable)",
  usage: ['keys show [--project ID]', 'keys regenerate [--publishable] [--project ID] [--yes]'],
  async run(ctx, args) {
    const api = ctx.tenant().tenant;
    const id = await ctx.projectId();
    const sub = args[0] ?? 'show';
    if (sub === 'show') {
      const p = await api.projects.get(id);
      ctx.out.result(
        { project_id: p.id, api_key: p.api_key, publishable_key: p.publishable_key },
        `project:         ${p.id}\nsecret key:      ${p.api_key}\npublishable key: ${p.publishable_key}`,
      );
    } else if (sub === 'regenerate') {
      const publishable = ctx.flags.publishable === true;
      await confirm(
        ctx,
        `Replace the ${publishable ? 'publishable' : 'secret'} key of ${id} (the old one stops working at once)`,
      );
      const p = publishable ? await api.projects.regeneratePublishableKey(id) : await api.projects.regenerateKey(id);
      const key = publishable ? p.publishable_key : p.api_key;
      ctx.out.result(
        { project_id: p.id, [publishable ? 'publishable_key' : 'api_key']: key },
        `New ${publishable ? 'publishable' : 'secret'} key: ${key}`,
      );
    } else throw new CliError(`Unknown: keys ${sub}`);
  },
};

export const clients: Command = {
  name: 'clients',
  summary: "The project's OIDC clients (client_id, secret, redirect URIs, scopes)",
  usage: [
    'clients list [--project ID]',
    'clients create <name> [--redirect-uri URI]... [--public true|false] [--grant-types g1,g2] [--scopes s1,s2]',
    'clients update <client_id> [--redirect-uri URI]... [--public true|false] [--grant-types g1,g2] [--scopes s1,s2] [--name NAME]',
    'clients rotate-secret <client_id> [--yes]',
    'clients delete <client_id> [--yes]',
  ],
  async run(ctx, args) {
    const api = ctx.tenant().tenant;
    const id = await ctx.projectId();
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const list = await api.clients.list(id);
      ctx.out.result(list, () =>
        table(
          list.map((c) => ({ ...c, grant_types: c.grant_types.join(','), redirect_uris: c.redirect_uris.join(' ') })),
          ['client_id', 'name', 'public', 'grant_types', 'redirect_uris'],
        ),
      );
    } else if (sub === 'create') {
      const c = await api.clients.create(id, { name: arg(args, 1, 'name'), ...settingsOf(ctx) } as never);
      ctx.out.result(
        c,
        `Created client ${c.name}\n  client_id:     ${c.client_id}\n  client_secret: ${c.public ? '(public client: none)' : c.client_secret}`,
      );
    } else if (sub === 'update') {
      const clientId = arg(args, 1, 'client_id');
      const change = settingsOf(ctx);
      const name = flag(ctx, 'name');
      if (name !== undefined) change.name = name;
      if (Object.keys(change).length === 0)
        throw new CliError('Nothing to change: give --redirect-uri, --public, --grant-types, --scopes or --name');
      const c = await api.clients.update(id, clientId, change as never);
      ctx.out.result(c, `Updated client ${c.client_id}`);
    } else if (sub === 'rotate-secret') {
      const clientId = arg(args, 1, 'client_id');
      await confirm(ctx, `Replace the secret of client ${clientId} (the old one stops working at once)`);
      const c = await api.clients.rotateSecret(id, clientId);
      ctx.out.result(c, `New client secret: ${c.client_secret}`);
    } else if (sub === 'delete') {
      const clientId = arg(args, 1, 'client_id');
      await confirm(ctx, `Delete client ${clientId} (its secret and the tokens issued to it stop working)`);
      await api.clients.remove(id, clientId);
      ctx.out.result({ deleted: clientId }, `Deleted client ${clientId}`);
    } else throw new CliError(`Unknown: clients ${sub}`, EXIT.USAGE);
  },
};

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The client settings given as flags (REST body names). */
function settingsOf(ctx: Parameters<Command['run']>[0]): Record<string, unknown> {
  const change: Record<string, unknown> = {};
  const uris = ctx.flags['redirect-uri'];
  if (uris !== undefined) change.redirect_uris = Array.isArray(uris) ? uris : [uris];
  const pub = flag(ctx, 'public');
  if (pub !== undefined) {
    if (pub !== 'true' && pub !== 'false') throw new CliError('--public takes true or false');
    change.public = pub === 'true';
  }
  const grants = flag(ctx, 'grant-types');
  if (grants !== undefined) change.grant_types = list(grants);
  const scopes = flag(ctx, 'scopes');
  if (scopes !== undefined) change.allowed_scopes = list(scopes);
  return change;
}
