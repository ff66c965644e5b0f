// Deterministic random streams shared by every process that must draw the same numbers: mulberry32 (synthetic
// models, golden quant vectors, tests) and the xorshift prompt token ids the benchmark gives webgguf and llama.cpp.
// Plain JS so the oracle and peer runners (separate Node processes, no TypeScript) import the very same code.

/**
 * mulberry32: uniform doubles in [0, 1) (32 random bits each) from `seed`.
 * @param {number} seed
 * @returns {() => number}
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `n` prompt token ids in [lo, hi) from an xorshift32 stream of `seed`: the same for every runtime given the seed.
 * @param {number} n
 * @param {number} seed
 * @param {number} lo
 * @param {number} hi
 * @returns {number[]}
 */
export function promptTokenIds(n, seed, lo, hi) {
  const out = [];
  let s = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out.push(lo + (s % (hi - lo)));
  }
  return out;
}
