/**
 * WASM non-causal attention (src/backend/wasm/attention-kernel.ts): on one thread it runs head by head, rows in pairs
 * through attention_pair_heads (wasm/assembly/attention-pair.ts) where that applies; the answer is bit-identical to
 * the two-thread path (row by row, heads split by attention_heads) on every build, for odd row counts (a row outside
 * every pair), GQA, head sizes off a multiple of 16, and a window wider than the sequence (dropped, so the pair kernel
 * runs), and matches the cpu reference. Sliding windows (causal-style and symmetric) pair through
 * attention_pair_window_heads, each row over its own keys: within rounding of the two-thread path (its scores are
 * grouped from the pair's first key), bit-identical on the scalar build (two single-row calls), and = cpu.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { AttentionParams, Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? ['relaxed-simd' as const] : [])];

/** [n, nHeads, nKvHeads, headDim, slidingWindow] */
const CASES: [number, number, number, number, number][] = [
  [37, 4, 2, 24, 0],
  [64, 6, 6, 36, 0],
  [33, 4, 4, 32, 9],
  [21, 4, 2, 16, 24], // a window wider than the sequence masks nothing: the pair kernel
  [300, 6, 2, 20, 0], // 3-head groups (a 2-head tile + 1), three 128-position blocks, 16- then 4-column V passes
];

async function run(ops: Ops, n: number, p: AttentionParams, seed: number): Promise<Float32Array> {
  const cols = p.nHeads * p.headDim;
  const kvCols = p.nKvHeads * p.headDim;
  const rand = mulberry32(seed);
  const rows = (len: number) => Float32Array.from({ length: len }, () => rand() * 2 - 1);
  ops.createKvCache({
    nSlots: 1,
    contextLength: n,
    layers: [{ nKvHeads: p.nKvHeads, headDim: p.headDim }],
    kvType: 'f32',
  });
  const q = ops.createActivation('q', n, cols);
  const k = ops.createActivation('k', n, kvCols);
  const v = ops.createActivation('v', n, kvCols);
  const o = ops.createActivation('o', n, cols);
  ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
  ops.setRows(q, rows(n * cols), n);
  ops.setRows(k, rows(n * kvCols), n);
  ops.setRows(v, rows(n * kvCols), n);
  ops.storeKv(0, k, v, n);
  ops.attention(o, q, 0, n, p);
  ops.endStep();
  const got = await ops.read(o, n);
  ops.destroy();
  return got;
}

/** One thread against two: the same bits, or (windowed pairs on the SIMD builds) the same within 1e-6. */
function expectOneIsTwo(one: Float32Array, two: Float32Array, variant: WasmVariant, windowed: boolean): void {
  if (!windowed || variant === 'scalar') {
    expect(one, `${variant}: one thread vs two`).toEqual(two);
    return;
  }
  let worst = 0;
  one.forEach((x, i) => {
    worst = Math.max(worst, Math.abs(x - two[i]!));
  });
  expect(worst, `${variant}: one thread vs two`).toBeLessThan(1e-6);
}

describe('WASM non-causal attention', () => {
  // Symmetric windows (EmbeddingGemma): half-width 8 masks 21 rows, 20 reaches every key (then the pair kernel).
  for (const slidingWindow of [16, 40]) {
    it(`21 rows, 4/1 heads × 16, symmetric window ${slidingWindow}: one thread = two, = cpu`, async () => {
      const p: AttentionParams = {
        ...{ nHeads: 4, nKvHeads: 1, headDim: 16, scale: 0.25, slidingWindow, softcap: 0 },
        ...{ causal: false, symmetricWindow: true },
      };
      const ref = await run(createCpuOps(), 21, p, 21);
      for (const variant of VARIANTS) {
        const one = await run(await createWasmOps({ variant, threads: 1 }), 21, p, 21);
        const two = await run(await createWasmOps({ variant, threads: 2 }), 21, p, 21);
        expectOneIsTwo(one, two, variant, slidingWindow / 2 < 20);
        one.forEach((x, i) => expect(Math.abs(x - ref[i]!), `${variant} [${i}]`).toBeLessThan(1e-5));
      }
    });
  }
  for (const [n, nHeads, nKvHeads, headDim, slidingWindow] of CASES) {
    const p: AttentionParams = {
      nHeads,
      nKvHeads,
      headDim,
      scale: 1 / Math.sqrt(headDim),
      slidingWindow,
      softcap: 0,
      causal: false,
    };
    it(`${n} rows, ${nHeads}/${nKvHeads} heads × ${headDim}, window ${slidingWindow}: one thread = two, = cpu`, async () => {
      const ref = await run(createCpuOps(), n, p, n);
      for (const variant of VARIANTS) {
        const one = await run(await createWasmOps({ variant, threads: 1 }), n, p, n);
        const two = await run(await createWasmOps({ variant, threads: 2 }), n, p, n);
        expectOneIsTwo(one, two, variant, slidingWindow > 0 && slidingWindow < n);
        one.forEach((x, i) => expect(Math.abs(x - ref[i]!), `${variant} [${i}]`).toBeLessThan(1e-5));
      }
    });
  }
});
