// `tessera login`, `logout`, `whoami`: the developer account (tenant), with TOTP MFA.
import { createClient, isTesseraError } from '../../index.ts';
import { ask, flag, type Command } from '../command.ts';
import { readCredentials, removeCredentials, writeCredentials, credentialsFile } from '../config.ts';
import { CliError, EXIT } from '../output.ts';

export const login: Command = {
  name: 'login',
  summary: 'Sign in to a Tessera account (credentials kept in your config folder, mode 0600)',
  usage: [
    'login [--url URL] [--email EMAIL] [--password PASSWORD | --password-stdin] [--totp CODE | --recovery-code CODE]',
  ],
  async run(ctx) {
    const url = ctx.url();
    const email = flag(ctx, 'email') ?? ctx.env.TESSERA_EMAIL ?? (await ask(ctx, 'E-mail: '));
    let password = flag(ctx, 'password') ?? ctx.env.TESSERA_PASSWORD;
    if (ctx.flags['password-stdin'] === true) password = (await ctx.readStdin()).replace(/\r?\n$/, '');
    password ??= await ask(ctx, 'Password: ', true);
    const client = createClient({ url });
    let totpCode = flag(ctx, 'totp');
    const recoveryCode = flag(ctx, 'recovery-code');
    let session;
    try {
      session = await client.tenant.login({ email, password, totpCode, recoveryCode });
    } catch (err) {
      if (!isTesseraError(err, 'MFA_REQUIRED') || totpCode || recoveryCode) throw err;
      totpCode = await ask(ctx, 'TOTP code: ').catch(() => {
        throw new CliError('This account has MFA on: pass --totp <code>', EXIT.AUTH);
      });
      session = await client.tenant.login({ email, password, totpCode });
    }
    const previous = readCredentials(ctx.env);
    writeCredentials(
      {
        url,
        email,
        accessToken: session.access_token,
        refreshToken: session.refresh_token,
        project: previous?.url === url && previous.email === email ? previous.project : undefined,
      },
      ctx.env,
    );
    ctx.out.result({ email, url, tenant: session.tenant }, `Logged in to ${url} as ${email}`);
  },
};

export const logout: Command = {
  name: 'logout',
  summary: 'Sign out (the session is revoked) and forget the credentials',
  usage: ['logout'],
  async run(ctx) {
    if (!readCredentials(ctx.env)) throw new CliError('Not logged in', EXIT.AUTH);
    await ctx
      .tenant()
      .tenant.logout()
      .catch(() => undefined);
    removeCredentials(ctx.env);
    ctx.out.result({ logged_out: true }, 'Logged out');
  },
};

export const whoami: Command = {
  name: 'whoami',
  summary: 'The signed-in account',
  usage: ['whoami'],
  async run(ctx) {
    const me = await ctx.tenant().tenant.me();
    ctx.out.result(
      { ...me, url: ctx.url(), credentials: credentialsFile(ctx.env) },
      `${me.email} (${me.plan.name} plan) at ${ctx.url()}${me.mfa_enabled ? ', MFA on' : ''}`,
    );
  },
};
