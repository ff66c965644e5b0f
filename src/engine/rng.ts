/**
 * The seeded random number generator behind sampling: xoshiro128** seeded through splitmix32. Pure integer
 * arithmetic, so a seed gives the same stream in every JS engine, on every backend and in a worker; draws are
 * 53-bit uniform doubles in [0, 1).
 */

/** A deterministic stream of uniform numbers. */
export interface Rng {
  /** The seed this stream started from (after normalisation to a safe integer). */
  readonly seed: number;
  /** A uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number;
  /** A uniform unsigned 32-bit integer. */
  nextUint32(): number;
}

/** splitmix32 step: spreads a 32-bit state into a well-mixed word (used only for seeding). */
function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * Creates an RNG from `seed`, any safe integer (negative values and values above 2³² are folded in, so every
 * distinct safe integer gives a distinct stream with overwhelming probability).
 */
export function createRng(seed: number): Rng {
  if (!Number.isSafeInteger(seed)) {
    throw new RangeError(`createRng: seed ${seed} is not a safe integer`);
  }
  const lo = seed >>> 0;
  const hi = Math.floor(seed / 0x1_0000_0000) >>> 0;
  const mix = { s: lo ^ Math.imul(hi, 0x27d4eb2d) };
  // State words of xoshiro128**: 4 × u32, never all zero.
  let a = splitmix32(mix);
  let b = splitmix32(mix) ^ hi;
  let c = splitmix32(mix);
  let d = splitmix32(mix);
  if ((a | b | c | d) === 0) a = 1;

  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
  return {
    seed,
    nextUint32,
    nextDouble(): number {
      const high = nextUint32() >>> 5; // 27 bits
      const low = nextUint32() >>> 6; // 26 bits
      return (high * 67108864 + low) / 9007199254740992;
    },
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** A fresh seed for requests that give none (crypto-random when available). */
export function randomSeed(): number {
  const c = (globalThis as { crypto?: { getRandomValues?(a: Uint32Array): Uint32Array } }).crypto;
  if (c?.getRandomValues) {
    const w = c.getRandomValues(new Uint32Array(1));
    return w[0];
  }
  return Math.floor(Math.random() * 0x1_0000_0000);
}
