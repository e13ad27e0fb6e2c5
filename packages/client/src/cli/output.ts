// Output of the CLI: human text by default, JSON with --json (one document on stdout); errors on stderr; exit
// codes a script can act on (EXIT below, also in the README).
import { isTesseraError } from '../errors.ts';

/** Exit codes: what went wrong, for scripts. */
export const EXIT = {
  OK: 0,
  /** Anything unexpected. */
  FAILURE: 1,
  /** Wrong command line (unknown command, missing argument, bad flag). */
  USAGE: 2,
  /** Not signed in, or the credentials were refused (401). */
  AUTH: 3,
  /** Signed in, but not allowed (403). */
  FORBIDDEN: 4,
  /** No such project, function, object, execution... (404). */
  NOT_FOUND: 5,
  /** A conflict: the name is taken, the limit is reached (409). */
  CONFLICT: 6,
  /** Any other error the server answered (4xx, 5xx). */
  API: 7,
  /** Tessera could not be reached. */
  NETWORK: 8,
} as const;

/** A problem with the command line or the user's setup: a message and an exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.USAGE) {
    super(message);
    this.exitCode = exitCode;
  }
}

export type Io = {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** stdout is a terminal (tables, colours of a progress bar). */
  tty: boolean;
  /** stderr is a terminal (progress bars, prompts). */
  errTty: boolean;
  stdin: NodeJS.ReadableStream;
};

export class Output {
  readonly json: boolean;
  readonly io: Io;
  constructor(io: Io, json: boolean) {
    this.io = io;
    this.json = json;
  }
  /** A result: `value` as JSON with --json, else the human text. */
  result(value: unknown, human: string | (() => string)): void {
    if (this.json) this.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
    else {
      const text = typeof human === 'function' ? human() : human;
      if (text) this.io.stdout(text.endsWith('\n') ? text : `${text}\n`);
    }
  }
  /** A note for humans (stderr; never in --json mode's stdout). */
  note(text: string): void {
    if (!this.json) this.io.stderr(`${text}\n`);
  }
}

/** A table of rows for humans. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const widths = columns.map((c) => Math.min(60, Math.max(c.length, ...rows.map((r) => cell(r[c]).length))));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (v.length > widths[i]! ? `${v.slice(0, widths[i]! - 1)}…` : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    '\n',
  );
}

/** The exit code and message of an error. */
export function describeError(err: unknown): { code: number; message: string } {
  if (err instanceof CliError) return { code: err.exitCode, message: err.message };
  if (isTesseraError(err)) {
    const where = err.requestId ? ` (request ${err.requestId})` : '';
    const message = `${err.code}: ${err.message}${where}`;
    if (err.status === 0) return { code: EXIT.NETWORK, message };
    if (err.status === 401) return { code: EXIT.AUTH, message };
    if (err.status === 403) return { code: EXIT.FORBIDDEN, message };
    if (err.status === 404) return { code: EXIT.NOT_FOUND, message };
    if (err.status === 409) return { code: EXIT.CONFLICT, message };
    return { code: EXIT.API, message };
  }
  return { code: EXIT.FAILURE, message: (err as Error)?.stack ?? String(err) };
}
