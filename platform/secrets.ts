// The internal secret: from config, or generated once into the data folder so that every process of
// a split deployment on this machine shares it.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Config } from './config.ts';
import { configureBroadcasts } from './broadcast.ts';

/**
 * Makes sure `config.internalSecret` is set, creating `<dataDir>/internal.secret` when needed, and gives it to what
 * signs with it process-wide (broadcasts).
 */
export function ensureInternalSecret(config: Config): string {
  if (config.internalSecret) {
    configureBroadcasts(config.internalSecret);
    return config.internalSecret;
  }
  // Private (0700) when made here; the embedded database's start may hand it to its server's user (platform/data-dir.ts).
  fs.mkdirSync(config.dataDirAbs, { recursive: true, mode: 0o700 });
  const file = path.join(config.dataDirAbs, 'internal.secret');
  try {
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  config.internalSecret = fs.readFileSync(file, 'utf8').trim();
  configureBroadcasts(config.internalSecret);
  return config.internalSecret;
}
