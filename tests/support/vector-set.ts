// A deterministic set of small vectors and queries, the same on every run (the vectorSearch tests).

/** A small deterministic generator (a linear congruential one), values in [-0.5, 0.5). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

/** `n` vectors and 12 queries of `dim` dimensions, four decimals each. */
export function vectorSet(n: number, dim: number): { vectors: number[][]; queries: number[][] } {
  const rnd = random(42);
  const vectors = Array.from({ length: n }, () => Array.from({ length: dim }, () => Number(rnd().toFixed(4))));
  const queries = Array.from({ length: 12 }, () => Array.from({ length: dim }, () => Number(rnd().toFixed(4))));
  return { vectors, queries };
}
