/**
 * mulberry32: the tiny deterministic PRNG the tests draw their fuzz cases and synthetic inputs from (the same stream
 * as scripts/oracle/make-quant-vectors.mjs). Test-only: the library's sampling RNG is `src/engine/rng.ts`.
 */

/** A stream of uniform doubles in [0, 1) (32 random bits each) from `seed`. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
