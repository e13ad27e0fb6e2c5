// Figures of a series of measurements.

/** The value at percentile `p` (0-100) of `xs`: the element at floor(n × p / 100) in ascending order. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}
