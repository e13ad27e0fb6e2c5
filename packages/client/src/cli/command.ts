// The shape of a command (one per file under ./commands), and small helpers they share.
import readline from 'node:readline';
import type { Ctx } from './context.ts';
import { CliError } from './output.ts';

export type Command = {
  name: string;
  summary: string;
  /** Usage lines (after `tessera `). */
  usage: string[];
  run: (ctx: Ctx, args: string[]) => Promise<void>;
};

/** The argument at `i`, or a usage error naming it. */
export function arg(args: string[], i: number, name: string): string {
  const v = args[i];
  if (v === undefined || v === '') throw new CliError(`Missing <${name}>`);
  return v;
}

/** A string flag. */
export function flag(ctx: Ctx, name: string): string | undefined {
  const v = ctx.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** Asks on the terminal (stderr); `secret` hides what is typed. Refused when stdin is not a terminal. */
export async function ask(ctx: Ctx, question: string, secret = false): Promise<string> {
  if (!ctx.out.io.errTty || !(process.stdin as { isTTY?: boolean }).isTTY)
    throw new CliError(`${question.replace(/:\s*$/, '')} is needed (no terminal to ask on: pass it as a flag)`);
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (secret) {
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.includes(question)) process.stderr.write(s);
    };
  }
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
    if (secret) process.stderr.write('\n');
  }
}

/** A destructive step: --yes, or a `y` typed on the terminal. */
export async function confirm(ctx: Ctx, what: string): Promise<void> {
  if (ctx.flags.yes === true) return;
  const answer = await ask(ctx, `${what}? Type y to go on: `).catch(() => {
    throw new CliError(`${what}: pass --yes to confirm`);
  });
  if (answer.trim().toLowerCase() !== 'y') throw new CliError('Cancelled', 1);
}

/** Parses JSON given on the command line, naming the flag on failure. */
export function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${what} is not JSON: ${(err as Error).message}`);
  }
}
