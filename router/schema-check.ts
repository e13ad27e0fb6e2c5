// The logic of `npm run schema:check`, importable by tests.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import {
  composeSupergraph,
  readSupergraphConfig,
  breakingChanges,
  readAllowlist,
  SUPERGRAPH_FILE,
  ROOT,
  type SubgraphEntry,
} from './compose.ts';

/**
 * The schema clients relied on before this change: the newest committed version of
 * schema/supergraph.graphql that differs from `current` (in a clean checkout, HEAD's own version is the
 * current one, so the one before it is taken). Outside a git checkout: the file on disk.
 */
function previousSupergraph(current: string): string | undefined {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    });
  try {
    const commits = git('log', '--format=%H', '-n', '50', '--', 'schema/supergraph.graphql')
      .split('\n')
      .filter(Boolean);
    for (const c of commits) {
      const text = git('show', `${c}:schema/supergraph.graphql`);
      if (text.trimEnd() !== current.trimEnd()) return text;
    }
    return undefined;
  } catch {
    return fs.existsSync(SUPERGRAPH_FILE) ? fs.readFileSync(SUPERGRAPH_FILE, 'utf8') : undefined;
  }
}

export type SchemaCheckResult = { ok: boolean; messages: string[] };

/**
 * Recomposes and compares. `previous` is the schema clients rely on (default: the committed one);
 * `readSdl` lets a test compose a changed subgraph without touching the files.
 */
export function checkSchema(
  opts: { previous?: string; current?: string; readSdl?: (e: SubgraphEntry) => string; allowlist?: string[] } = {},
): SchemaCheckResult {
  const messages: string[] = [];
  let composed: string;
  try {
    composed = composeSupergraph(readSupergraphConfig(), opts.readSdl);
  } catch (err) {
    return { ok: false, messages: [(err as Error).message] };
  }
  const normalize = (s: string) => s.trimEnd() + '\n';
  const onDisk = opts.current ?? (fs.existsSync(SUPERGRAPH_FILE) ? fs.readFileSync(SUPERGRAPH_FILE, 'utf8') : '');
  let ok = true;
  if (normalize(composed) !== normalize(onDisk)) {
    ok = false;
    messages.push('schema/supergraph.graphql is out of date: run `npm run schema:compose` and commit the result');
  }
  const previous = opts.previous ?? previousSupergraph(composed);
  if (previous) {
    const allowed = new Set(opts.allowlist ?? readAllowlist());
    const breaking = breakingChanges(previous, composed);
    for (const change of breaking) {
      if (allowed.has(change.description)) {
        messages.push(`allowed breaking change: ${change.description}`);
      } else {
        ok = false;
        messages.push(
          `breaking change (${change.type}): ${change.description} — list it in schema/breaking-changes-allowed.yaml if intended`,
        );
      }
    }
  }
  if (ok) messages.push('schema check passed');
  return { ok, messages };
}
