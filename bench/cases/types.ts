// What a benchmark case is. An HTTP case sets up its data and names the two targets driven with the same
// autocannon load; a custom case (file throughput, memory, drains...) measures itself and answers figures.
import type { ChildProcess } from 'node:child_process';

export type Target = {
  url: string;
  method: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string | Buffer;
};

export type BenchContext = {
  /** Base URL of Tessera (one-process mode). */
  tessera: string;
  /** Process id of the Tessera child (its /proc/<pid>/status gives VmRSS and VmHWM). */
  tesseraPid: number;
  /** Base URL of the node:http + pg floor (bench/peers/floor.ts). */
  floor: string;
  /** The database both use. */
  databaseUrl: string;
  /** A scratch folder (bench/out, git-ignored, on the disk Tessera's blobs land on); remove what you put there. */
  outDir: string;
  /** `--quick`: run briefly (smaller files, fewer items). */
  quick: boolean;
  /**
   * Starts another one-process Tessera on the same database and data folder (same internal secret), with `env` over
   * the harness's own settings; `stop` ends it (SIGTERM, answers once it exited), else it is killed when the run
   * ends. It runs background jobs too (it would take queued work from the other cases): stop it after use. Absent
   * where a tool has no harness (memory probe).
   */
  spawnTessera?: (
    env: Record<string, string>,
    /** A session of its own (bench/child.ts startChild `ownSession`). */
    ownSession?: boolean,
  ) => Promise<{ url: string; pid: number; stop: () => Promise<void> }>;
  /** Starts a peer process (killed when the run ends). */
  spawnPeer: (
    args: string[],
    env: Record<string, string>,
    ready: RegExp | string,
  ) => Promise<{ child: ChildProcess; output: () => string }>;
};

type CaseInfo = {
  id: string;
  title: string;
  peer: string;
  goal: string;
};

/** Driven by autocannon on both targets (the default kind). */
export type HttpCase = CaseInfo & {
  kind?: 'http';
  /** Least seconds each load lasts, also under `--quick` (slow peers, e.g. ~30 logins/s, need more than 2 s to answer anything). */
  minDurationS?: number;
  setup: (ctx: BenchContext) => Promise<{ tessera: Target; peer: Target }>;
};

/** What one round of a custom case measured: named figures of each side and Tessera's ratio to the peer. */
export type CustomFigures = {
  tessera: Record<string, number>;
  peer: Record<string, number>;
  /** Tessera relative to the peer in the goal's sense (higher is better). */
  ratio: number;
  /** Whether the case's goal was met, when the case can tell. */
  met?: boolean;
};

/**
 * Measures itself: `setup` prepares once and answers a runner called once per round (rounds interleaved with the other
 * cases), or `skipped` with the reason when this run cannot measure it (e.g. the database server lacks an extension):
 * a skipped case is reported as such, not as a case that produced no figures.
 */
export type CustomCase = CaseInfo & {
  kind: 'custom';
  setup: (
    ctx: BenchContext,
  ) => Promise<{ run: () => Promise<CustomFigures>; cleanup?: () => Promise<void> } | { skipped: string }>;
  /** Folds the rounds into one result; default: the median of every figure, `met` only when every round met it. */
  summarize?: (rounds: CustomFigures[]) => CustomFigures;
};

export type BenchCase = HttpCase | CustomCase;
