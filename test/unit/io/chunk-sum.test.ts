/**
 * The fast chunk checksum of the model store (issue 20): fixed values (so a change of the function, which would make
 * every stored entry fail its check, is caught), the same sum for an unaligned view, every single-bit error and every
 * length caught, and the chunk worker's inline copy (embedded from the same source) computing the same sums.
 */

import { describe, expect, it } from 'vitest';
import { chunkSum } from '../../../src/io/chunk-sum.js';
import { CHUNK_WORKER_SOURCE } from '../../../src/io/idb-chunk-reader.js';

/** Deterministic bytes. */
function bytesOf(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe('chunkSum', () => {
  it('keeps its recorded values', () => {
    expect(chunkSum(new Uint8Array(0))).toBe('2abf5af95614d4792ea331b9cbd7a0e4');
    expect(chunkSum(new Uint8Array([1]))).toBe('dc8ff193571d1d0e2ea331b9cbd7a0e4');
    expect(chunkSum(new TextEncoder().encode('hello world, chunk'))).toBe('bad90cd9e429c8705f977e4ca764c95e');
    expect(chunkSum(bytesOf(1000))).toMatch(/^[0-9a-f]{32}$/);
  });

  it('reads an unaligned view like an aligned copy', () => {
    const data = bytesOf(4099, 7);
    const shifted = new Uint8Array(data.byteLength + 3);
    shifted.set(data, 3);
    expect(chunkSum(shifted.subarray(3))).toBe(chunkSum(data.slice()));
  });

  it('changes with every single-bit error and every length', () => {
    const data = bytesOf(203, 3); // 50 words (12 rounds of 4 + 2) and 3 trailing bytes
    const base = chunkSum(data);
    const seen = new Set([base]);
    for (let i = 0; i < data.byteLength; i++) {
      for (let bit = 0; bit < 8; bit++) {
        data[i] ^= 1 << bit;
        seen.add(chunkSum(data));
        data[i] ^= 1 << bit;
      }
    }
    expect(seen.size).toBe(1 + data.byteLength * 8);
    expect(chunkSum(data)).toBe(base);
    const lengths = new Set<string>();
    for (let n = 0; n <= 40; n++) lengths.add(chunkSum(new Uint8Array(n)));
    expect(lengths.size).toBe(41); // zeros of each length differ
  });

  it('the chunk worker script embeds the same function', () => {
    const inWorker = new Function(
      `${CHUNK_WORKER_SOURCE.split('\nvar dbs')[0]}\nreturn chunkSum;`,
    )() as typeof chunkSum;
    for (const n of [0, 5, 64, 1027]) expect(inWorker(bytesOf(n, n))).toBe(chunkSum(bytesOf(n, n)));
  });
});
