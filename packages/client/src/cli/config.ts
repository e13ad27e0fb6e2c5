// Where the CLI keeps its credentials: `<config folder>/tessera/credentials.json`, readable by the user only (0600, in
// a 0700 folder). The config folder is $TESSERA_CONFIG_DIR, else $XDG_CONFIG_HOME, else ~/.config (%APPDATA% on Windows).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type Credentials = {
  url: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  /** The project the project commands use when none is named. */
  project?: string;
};

/** The CLI's folder. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TESSERA_CONFIG_DIR) return env.TESSERA_CONFIG_DIR;
  const base =
    env.XDG_CONFIG_HOME || (process.platform === 'win32' && env.APPDATA) || path.join(os.homedir(), '.config');
  return path.join(base, 'tessera');
}

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'credentials.json');
}

export function readCredentials(env: NodeJS.ProcessEnv = process.env): Credentials | undefined {
  try {
    return JSON.parse(fs.readFileSync(credentialsFile(env), 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

/** Writes the credentials with mode 0600 (also when the file existed with another mode). */
export function writeCredentials(creds: Credentials, env: NodeJS.ProcessEnv = process.env): void {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = credentialsFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

export function removeCredentials(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    fs.unlinkSync(credentialsFile(env));
    return true;
  } catch {
    return false;
  }
}
