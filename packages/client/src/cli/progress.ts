// A progress bar on stderr (never stdout) for uploads and deploys: drawn in place on a terminal unless --json; with
// TESSERA_PROGRESS=1 also elsewhere (logs, CI), one line per quarter.

const WIDTH = 30;

function human(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

export type Progress = { update: (done: number, total?: number) => void; finish: () => void };

/** A bar labelled `label`; `unit` `bytes` shows sizes, `items` counts. */
export function progressBar(
  write: (s: string) => void,
  opts: { label: string; unit: 'bytes' | 'items'; live: boolean; enabled: boolean },
): Progress {
  if (!opts.enabled) return { update: () => {}, finish: () => {} };
  let lastQuarter = -1;
  let last = '';
  let finished = false;
  const render = (done: number, total?: number): string => {
    const fmt = (n: number) => (opts.unit === 'bytes' ? human(n) : String(n));
    if (!total) return `${opts.label} ${fmt(done)}`;
    const ratio = Math.min(1, done / total);
    const filled = Math.round(ratio * WIDTH);
    return `${opts.label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${Math.floor(ratio * 100)}% ${fmt(done)}/${fmt(total)}`;
  };
  return {
    update(done, total) {
      last = render(done, total);
      if (opts.live) write(`\r${last}`);
      else if (total) {
        const quarter = Math.floor((Math.min(1, done / total) * 100) / 25);
        if (quarter > lastQuarter) {
          lastQuarter = quarter;
          write(`${last}\n`);
        }
      }
    },
    finish() {
      if (finished) return;
      finished = true;
      if (opts.live && last) write('\n');
    },
  };
}
