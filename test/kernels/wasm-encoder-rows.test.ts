/**
 * The encoder ops in the WASM kernels (wasm/assembly/encoder-rows.ts, ALiBi in wasm/assembly/attention.ts) against the
 * plain-TS reference: LayerNorm and ggml's f16-tabulated GELU bit-identical on every build (with and without weight
 * and bias, in and out of place; GELU over f16 subnormals, the ±10 clamps, NaN and infinities), and ALiBi attention
 * (jina-bert-v2) on one and two threads within f32 rounding of the reference — and not the attention without the bias.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { AttentionParams, Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? ['relaxed-simd' as const] : [])];

function randoms(len: number, seed: number, scale = 1, offset = 0): Float32Array {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: len }, () => (rand() * 2 - 1) * scale + offset);
}

async function vector(ops: Ops, name: string, values: Float32Array) {
  return ops.uploadWeight({ name, type: GgmlType.F32, shape: [values.length] }, new Uint8Array(values.buffer.slice(0)));
}

/**
 * LayerNorms of 7 rows of 302 (large mean; the kernel's four-row block, three rows after it and a lane tail): weight
 * and bias, weight only over 6 rows into a wider buffer, in place bare.
 */
async function layerNorms(ops: Ops): Promise<Float32Array[]> {
  const cols = 302;
  const x = ops.createActivation('x', 7, cols);
  const y = ops.createActivation('y', 7, cols + 20);
  const w = await vector(ops, 'ln.w', randoms(cols, 6));
  const b = await vector(ops, 'ln.b', randoms(cols, 7));
  ops.beginStep({ tokens: new Int32Array(7), startPos: 0, slot: 0 });
  ops.setRows(x, randoms(7 * cols, 5, 3, 4), 7);
  ops.layerNorm(y, x, w, b, 1e-12, 7);
  const withBias = await ops.read(y, 7);
  ops.layerNorm(y, x, w, null, 1e-5, 6);
  const weightOnly = await ops.read(y, 6);
  ops.layerNorm(x, x, null, null, 1e-5, 7);
  ops.endStep();
  return [withBias, weightOnly, await ops.read(x, 7)];
}

/**
 * GELU in place over a sweep of −12 … 12, f16 rounding ties, random values, f16 subnormals and zeros, the clamps, NaN
 * and ±∞ (the SIMD builds take groups of four values without a special one four at a time).
 */
async function gelus(ops: Ops): Promise<Float32Array> {
  const edge = [0, -0, 1e-8, -1e-8, 3e-5, -6e-5, 2 ** -24, 2 ** -25, 2 ** -26, -10, 10, -9.99, 9.99, Number.NaN];
  const values = Float32Array.from([
    ...Array.from({ length: 512 }, (_, i) => -12 + (24 * i) / 511),
    ...[1 + 2 ** -11, 1 + 3 * 2 ** -11, -(2 + 2 ** -10), 0.5 + 3 * 2 ** -12], // f16 ties: to even, down and up
    ...randoms(500, 9, 4),
    ...edge,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ]);
  const x = ops.createActivation('g', 1, values.length);
  ops.beginStep({ tokens: new Int32Array(1), startPos: 0, slot: 0 });
  ops.setRows(x, values, 1);
  ops.gelu(x, 1);
  ops.endStep();
  return ops.read(x, 1);
}

/** Non-causal attention of n rows with `params` over random q/k/v (f32 KV). */
async function attention(ops: Ops, n: number, p: AttentionParams, seed: number): Promise<Float32Array> {
  const cols = p.nHeads * p.headDim;
  const kvCols = p.nKvHeads * p.headDim;
  ops.createKvCache({ nSlots: 1, contextLength: n, layers: [{ nKvHeads: p.nKvHeads, headDim: p.headDim }] });
  const q = ops.createActivation('q', n, cols);
  const k = ops.createActivation('k', n, kvCols);
  const v = ops.createActivation('v', n, kvCols);
  const o = ops.createActivation('o', n, cols);
  ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
  ops.setRows(q, randoms(n * cols, seed, 2), n);
  ops.setRows(k, randoms(n * kvCols, seed + 1, 2), n);
  ops.setRows(v, randoms(n * kvCols, seed + 2), n);
  ops.storeKv(0, k, v, n);
  ops.attention(o, q, 0, n, p);
  ops.endStep();
  return ops.read(o, n);
}

describe('WASM encoder row ops', () => {
  it('layerNorm: bit-identical to the reference on every build', async () => {
    const want = await layerNorms(createCpuOps());
    for (const variant of VARIANTS) {
      expect(await layerNorms(await createWasmOps({ variant, threads: 1 })), variant).toEqual(want);
    }
  });

  it("gelu: llama.cpp CPU's f16 table, bit-identical to the reference on every build", async () => {
    const want = await gelus(createCpuOps());
    for (const variant of VARIANTS) {
      const got = await gelus(await createWasmOps({ variant, threads: 1 }));
      expect(got, variant).toEqual(want);
    }
    expect(want[0]).toBe(0); // x = −12
    expect(want[511]).toBe(12); // x = 12
  });
});

describe('WASM ALiBi attention (jina-bert-v2)', () => {
  /** [n, nHeads, nKvHeads, headDim]: 12 heads (slopes past the power of two), GQA, odd rows. */
  const CASES: [number, number, number, number][] = [
    [37, 12, 12, 16],
    [20, 6, 2, 24],
  ];
  for (const [n, nHeads, nKvHeads, headDim] of CASES) {
    it(`${n} rows, ${nHeads}/${nKvHeads} heads × ${headDim}: one thread = two, = cpu, ≠ without the bias`, async () => {
      const p: AttentionParams = {
        nHeads,
        nKvHeads,
        headDim,
        scale: 1 / Math.sqrt(headDim),
        slidingWindow: 0,
        softcap: 0,
        causal: false,
        alibiMaxBias: 8,
      };
      const want = await attention(createCpuOps(), n, p, n);
      const plain = await attention(createCpuOps(), n, { ...p, alibiMaxBias: 0 }, n);
      let moved = 0;
      want.forEach((x, i) => {
        moved = Math.max(moved, Math.abs(x - plain[i]!));
      });
      expect(moved).toBeGreaterThan(0.05); // the bias matters for these inputs
      for (const variant of VARIANTS) {
        const one = await attention(await createWasmOps({ variant, threads: 1 }), n, p, n);
        const two = await attention(await createWasmOps({ variant, threads: 2 }), n, p, n);
        expect(one, `${variant}: one thread vs two`).toEqual(two);
        one.forEach((x, i) => expect(Math.abs(x - want[i]!), `${variant} [${i}]`).toBeLessThan(1e-5));
      }
    });
  }
});
