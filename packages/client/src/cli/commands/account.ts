// `tessera account ...`: recover and manage the developer account — forgot/reset/change password, change e-mail,
// MFA recovery codes, sessions ("sign out everywhere"), delete the account. Sensitive changes ask again for the
// current password (--password, --password-stdin, or asked on the terminal) or, with MFA on, a TOTP code (--totp).
import { createClient } from '../../index.ts';
import type { Reauth } from '../../tenant.ts';
import { arg, ask, confirm, flag, type Command } from '../command.ts';
import type { Ctx } from '../context.ts';
import { removeCredentials } from '../config.ts';
import { CliError, table } from '../output.ts';

/** The current password or a TOTP code, from the flags or the terminal. */
async function reauth(ctx: Ctx): Promise<Reauth> {
  const totpCode = flag(ctx, 'totp');
  if (totpCode) return { totpCode };
  if (ctx.flags['password-stdin'] === true) return { currentPassword: (await ctx.readStdin()).replace(/\r?\n$/, '') };
  return { currentPassword: flag(ctx, 'password') ?? (await ask(ctx, 'Current password: ', true)) };
}

/** The new password: --new-password, or asked twice on the terminal. */
async function newPassword(ctx: Ctx): Promise<string> {
  const given = flag(ctx, 'new-password');
  if (given) return given;
  const first = await ask(ctx, 'New password: ', true);
  if ((await ask(ctx, 'New password again: ', true)) !== first) throw new CliError('The two passwords differ');
  return first;
}

export const account: Command = {
  name: 'account',
  summary: 'Recover and manage your developer account (password, e-mail, recovery codes, sessions, deletion)',
  usage: [
    'account password forgot <email>',
    'account password reset --token TOKEN [--new-password P]',
    'account password change [--password P | --password-stdin | --totp CODE] [--new-password P]',
    'account email change <new-email> [--password P | --password-stdin | --totp CODE]',
    'account email confirm <token>',
    'account recovery-codes --totp CODE',
    'account sessions [list]',
    'account sessions revoke <id>',
    'account sessions revoke-all [--keep-current]',
    'account delete [--password P | --password-stdin | --totp CODE] --yes',
  ],
  async run(ctx, args) {
    const [group, sub] = args;
    // Without a session: the mails' two ends.
    const anonymous = () => createClient({ url: ctx.url() }).tenant;
    if (group === 'password' && sub === 'forgot') {
      await anonymous().password.forgot(arg(args, 2, 'email'));
      ctx.out.result(
        { accepted: true },
        'If this address has an account, a reset link is on its way (it works once, for 1 hour).',
      );
    } else if (group === 'password' && sub === 'reset') {
      const token = flag(ctx, 'token') ?? arg(args, 2, 'token');
      await anonymous().password.reset(token, await newPassword(ctx));
      ctx.out.result({ reset: true }, 'Password changed; every session of the account ended. Run tessera login.');
    } else if (group === 'password' && sub === 'change') {
      const proof = await reauth(ctx);
      await ctx.tenant().tenant.password.change(await newPassword(ctx), proof);
      ctx.out.result({ changed: true }, 'Password changed; your other sessions ended.');
    } else if (group === 'email' && sub === 'change') {
      const email = arg(args, 2, 'new-email');
      await ctx.tenant().tenant.email.change(email, await reauth(ctx));
      ctx.out.result(
        { accepted: true },
        `A confirmation link went to ${email}; the address changes when it is opened (tessera account email confirm <token>).`,
      );
    } else if (group === 'email' && sub === 'confirm') {
      const tenant = await anonymous().email.confirm(arg(args, 2, 'token'));
      ctx.out.result(tenant, `The account's address is now ${tenant.email}`);
    } else if (group === 'recovery-codes') {
      const code = flag(ctx, 'totp') ?? (await ask(ctx, 'TOTP code: '));
      const codes = await ctx.tenant().tenant.mfa.regenerateRecoveryCodes(code);
      ctx.out.result(
        { recovery_codes: codes },
        `New recovery codes (the old ones no longer work; each works once; shown only now):\n${codes.map((c) => `  ${c}`).join('\n')}`,
      );
    } else if (group === 'sessions' && (sub === undefined || sub === 'list')) {
      const list = await ctx.tenant().tenant.sessions.list();
      ctx.out.result(list, () =>
        table(
          list.map((s) => ({ ...s, current: s.current ? '*' : '' })),
          ['current', 'id', 'ip', 'created_at', 'last_used_at', 'expires_at'],
        ),
      );
    } else if (group === 'sessions' && sub === 'revoke') {
      const id = arg(args, 2, 'id');
      await ctx.tenant().tenant.sessions.revoke(id);
      ctx.out.result({ revoked: id }, `Ended session ${id}`);
    } else if (group === 'sessions' && sub === 'revoke-all') {
      const keepCurrent = ctx.flags['keep-current'] === true;
      if (!keepCurrent) await confirm(ctx, 'Sign out of every session, this one included');
      const revoked = await ctx.tenant().tenant.sessions.revokeAll({ keepCurrent });
      if (!keepCurrent) removeCredentials(ctx.env);
      ctx.out.result({ revoked }, `Ended ${revoked} session${revoked === 1 ? '' : 's'}`);
    } else if (group === 'delete') {
      const api = ctx.tenant().tenant;
      const me = await api.me();
      await confirm(ctx, `Delete the account ${me.email} and every project it owns, with no undo`);
      const { deleted_projects } = await api.deleteAccount(me.email, await reauth(ctx));
      removeCredentials(ctx.env);
      ctx.out.result(
        { deleted: me.email, deleted_projects },
        `Deleted the account ${me.email} and ${deleted_projects.length} project${deleted_projects.length === 1 ? '' : 's'}`,
      );
    } else throw new CliError(`Unknown: account ${args.join(' ')}`.trim());
  },
};
