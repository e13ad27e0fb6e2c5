// What every command gets: the parsed flags, the output, the saved credentials, and clients built from them (the
// tenant's, and a project's with its secret key, fetched with the tenant's token).
import { createClient, type TesseraClient } from '../index.ts';
import { readCredentials, writeCredentials, type Credentials } from './config.ts';
import { CliError, EXIT, type Output } from './output.ts';

export type Flags = Record<string, string | boolean | string[] | undefined>;

export type Ctx = {
  out: Output;
  flags: Flags;
  env: NodeJS.ProcessEnv;
  /** The saved credentials, if logged in. */
  credentials: () => Credentials | undefined;
  /** Tessera's address: --url, TESSERA_URL, the saved one, or http://localhost:8080. */
  url: () => string;
  /** A client with the tenant's token (refreshed and saved again when it expired). */
  tenant: () => TesseraClient;
  /** The project the command is about: --project, TESSERA_PROJECT, the saved default, or the tenant's only project. */
  projectId: () => Promise<string>;
  /** A client of that project with its secret API key. */
  project: () => Promise<TesseraClient>;
  /** Reads all of stdin (for `-` arguments). */
  readStdin: () => Promise<string>;
};

export function createCtx(out: Output, flags: Flags, env: NodeJS.ProcessEnv): Ctx {
  let tenant: TesseraClient | undefined;
  let project: Promise<TesseraClient> | undefined;
  const str = (name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const ctx: Ctx = {
    out,
    flags,
    env,
    credentials: () => readCredentials(env),
    url: () =>
      (str('url') ?? env.TESSERA_URL ?? readCredentials(env)?.url ?? 'http://localhost:8080').replace(/\/+$/, ''),
    tenant() {
      if (tenant) return tenant;
      const creds = readCredentials(env);
      if (!creds) throw new CliError('Not logged in: run `tessera login` first', EXIT.AUTH);
      const client = createClient({ url: str('url') ?? env.TESSERA_URL ?? creds.url });
      client.tenant.session = { access_token: creds.accessToken, refresh_token: creds.refreshToken } as never;
      // A refreshed session is saved at once: the old refresh token no longer works.
      const refresh = client.tenant.refresh.bind(client.tenant);
      client.tenant.refresh = async (token?: string) => {
        const s = await refresh(token);
        writeCredentials({ ...creds, accessToken: s.access_token, refreshToken: s.refresh_token }, env);
        return s;
      };
      return (tenant = client);
    },
    async projectId() {
      const named = str('project') ?? env.TESSERA_PROJECT ?? readCredentials(env)?.project;
      if (named) return named;
      const projects = await ctx.tenant().tenant.projects.list();
      if (projects.length === 1) return projects[0]!.id;
      throw new CliError(
        projects.length === 0
          ? 'No project yet: `tessera projects create <name>`'
          : 'Several projects: name one with --project <id> (or `tessera projects use <id>`)',
      );
    },
    project() {
      project ??= (async () => {
        const p = await ctx.tenant().tenant.projects.get(await ctx.projectId());
        return createClient({ url: ctx.url(), key: p.api_key });
      })();
      return project;
    },
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
      return Buffer.concat(chunks).toString('utf8');
    },
  };
  return ctx;
}
