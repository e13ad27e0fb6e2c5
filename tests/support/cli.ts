// The `tessera` command line as a user runs it: a child process of this Node, with its own config folder, the
// platform's address, and nothing of the test's environment but PATH (what `env` adds on top).
import { spawn } from 'node:child_process';

const CLI = new URL('../../packages/client/src/cli/main.ts', import.meta.url).pathname;

/** What a run printed and its exit code; `json()` parses stdout. */
export type CliRun = { code: number; stdout: string; stderr: string; json: () => any }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Runs `tessera args...` against `url` with `home`/`configDir`; `input` goes to stdin. */
export function runCli(
  args: string[],
  opts: {
    url: string;
    home: string;
    configDir: string;
    cwd?: string;
    input?: string;
    env?: Record<string, string>;
  },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: opts.cwd,
      env: {
        PATH: process.env.PATH,
        HOME: opts.home,
        TESSERA_CONFIG_DIR: opts.configDir,
        TESSERA_URL: opts.url,
        ...opts.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }));
    child.stdin.end(opts.input ?? '');
  });
}
