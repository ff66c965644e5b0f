/** mulberry32: uniform doubles in [0, 1) from `seed` (see deterministic-random.mjs). */
export declare function mulberry32(seed: number): () => number;
/** `n` prompt token ids in [lo, hi) from an xorshift32 stream of `seed` (see deterministic-random.mjs). */
export declare function promptTokenIds(n: number, seed: number, lo: number, hi: number): number[];
