/**
 * Q8_0 matmuls on the relaxed-SIMD build (weights stored in 4-row groups with the sign bit flipped,
 * wasm/assembly/gemv-q8-rows4.ts): equal to the simd128 build's row-pair kernel within f32 rounding (the same exact integer block
 * sums; only the order of the float scale-and-add steps differs) for row counts off a multiple of 4 (rows outside
 * whole groups), token counts around the 4-token tiles and the n ≥ 8 switch (and the last n % 4 tokens), every
 * weight byte −128 … 127, activation rows wider than k, and two threads whose row chunks cut 4-row groups.
 */

import v8 from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const relaxed = detectWasmFeatures().relaxedSimd;
const Q8 = getQuantType(GgmlType.Q8_0);

/** Q8_0 rows [nRows, k] with random f16 scales and every quant byte (−128 included) equally likely. */
function randomQ8(k: number, nRows: number, seed: number): Uint8Array {
  const r = mulberry32(seed);
  const bytes = new Uint8Array((k / 32) * nRows * Q8.blockBytes);
  for (let b = 0; b < bytes.length; b += Q8.blockBytes) {
    bytes[b] = Math.floor(r() * 256); // scale ≈ 2^-6 … 2^-5 (f16 0x2400 … 0x27ff)
    bytes[b + 1] = 0x24 + Math.floor(r() * 4);
    for (let j = 2; j < Q8.blockBytes; j++) bytes[b + j] = Math.floor(r() * 256);
  }
  return bytes;
}

function randomF32(n: number, seed: number, scale = 1): Float32Array {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (r() * 2 - 1) * scale);
}

/** x [n, xCols] (first k columns used) · W [nRows, k]ᵀ on `ops`. */
async function matmul(ops: Ops, bytes: Uint8Array, k: number, nRows: number, x: Float32Array, n: number, xCols = k) {
  const w = await ops.uploadWeight({ name: `w${k}x${nRows}`, type: GgmlType.Q8_0, shape: [k, nRows] }, bytes);
  const xa = ops.createActivation('x', n, xCols);
  const out = ops.createActivation('out', n, nRows);
  ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
  ops.setRows(xa, x, n);
  ops.matmul(out, xa, w, n);
  ops.endStep();
  return ops.read(out, n);
}

/** Fails unless got equals want within 1e-6 of Σ|w·x| per output (f32 rounding of the same integer sums). */
function expectClose(
  got: Float32Array,
  want: Float32Array,
  bytes: Uint8Array,
  x: Float32Array,
  k: number,
  xCols: number,
  what: string,
) {
  const nRows = want.length / (x.length / xCols);
  const w = new Float32Array(nRows * k);
  Q8.dequantizeRow(bytes, w, nRows * k);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const [t, r] = [Math.floor(i / nRows), i % nRows];
    let mag = 0;
    for (let j = 0; j < k; j++) mag += Math.abs(w[r * k + j]! * x[t * xCols + j]!);
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (1e-6 * mag + 1e-6));
  }
  expect(worst, what).toBeLessThanOrEqual(1);
}

describe.runIf(relaxed)('Q8_0 4-row tiles (relaxed SIMD) vs the simd128 row-pair kernel', () => {
  let r4: Ops;
  let r4x2: Ops;
  let pairs: Ops;
  beforeAll(async () => {
    r4 = await createWasmOps({ variant: 'relaxed-simd', threads: 1 });
    r4x2 = await createWasmOps({ variant: 'relaxed-simd', threads: 2 });
    pairs = await createWasmOps({ variant: 'simd128', threads: 1 });
  });
  afterAll(() => {
    for (const o of [r4, r4x2, pairs]) o?.destroy();
  });

  it('rows 1, 2, 3, 5, 6, 7, 37 × tokens 7…13, 16, 17, 33 (4-token tiles, row-pair tails)', async () => {
    const k = 96;
    for (const nRows of [1, 2, 3, 5, 6, 7, 37]) {
      const bytes = randomQ8(k, nRows, nRows);
      for (const n of [7, 8, 9, 10, 11, 12, 13, 16, 17, 33]) {
        const x = randomF32(n * k, n * 31 + nRows, 3);
        const want = await matmul(pairs, bytes, k, nRows, x, n);
        expectClose(await matmul(r4, bytes, k, nRows, x, n), want, bytes, x, k, k, `rows ${nRows} n ${n}`);
      }
    }
  });

  it('activation rows wider than k (a q/k/v buffer read in part)', async () => {
    const [k, nRows, n, xCols] = [64, 12, 12, 96];
    const bytes = randomQ8(k, nRows, 5);
    const x = randomF32(n * xCols, 6, 2);
    const want = await matmul(pairs, bytes, k, nRows, x, n, xCols);
    expectClose(await matmul(r4, bytes, k, nRows, x, n, xCols), want, bytes, x, k, xCols, 'wide x');
  });

  it('two threads whose row chunks cut 4-row groups (131 rows × 1024)', async () => {
    const [k, nRows, n] = [1024, 131, 13];
    const bytes = randomQ8(k, nRows, 3);
    const x = randomF32(n * k, 4, 2);
    const want = await matmul(pairs, bytes, k, nRows, x, n);
    expectClose(await matmul(r4x2, bytes, k, nRows, x, n), want, bytes, x, k, k, '×2 threads');
  });
});
