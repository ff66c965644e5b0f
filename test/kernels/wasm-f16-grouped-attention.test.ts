/**
 * The WASM f16-KV attention's grouped path (wasm/assembly/attention-widen.ts + attention.ts: each block of K/V rows
 * widened to f32 once per GQA group, then the f32 register tiles) at contexts of several 128-position blocks:
 * - bit for bit the f32-KV kernel run on the same (f16-representable) q, K and V, on every build and with two
 *   threads — so the widening is exact and the f16 path is the f32 path's arithmetic (the former head-by-head f16
 *   kernel summed in another order and would not match);
 * - within the typed-KV test's tolerance of the reference backend with f16 KV (which multiplies in f64).
 * Cases: Qwen2.5-0.5B's group of 7 heads per KV head, MHA, a sliding window, soft-capping, head sizes with a 4-column
 * (36) and a scalar (6) tail past the 8-value widening.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { type KvType, roundQueryForKv } from '../../src/backend/kv-type.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

/** n values in ±1, rounded to f16 (so an f32 and an f16 cache hold the same values). */
function randomF16(n: number, next: () => number): Float32Array {
  const a = Float32Array.from({ length: n }, () => next() * 2 - 1);
  roundQueryForKv('f16', a);
  return a;
}

interface Case {
  readonly nHeads: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  readonly slidingWindow: number;
  readonly softcap: number;
}

const STEPS: readonly (readonly [number, number])[] = [
  [0, 261], // a prompt over three blocks (the last partial, not a multiple of 4)
  [261, 1], // decode steps
  [262, 3],
];

/** Attention outputs of the steps on slot 1 of layer 1, with `kvType` KV. */
async function run(ops: Ops, c: Case, kvType: KvType, seed: number): Promise<Float32Array[]> {
  const next = mulberry32(seed);
  const { nHeads, nKvHeads, headDim } = c;
  const params = {
    nHeads,
    nKvHeads,
    headDim,
    scale: 1 / Math.sqrt(headDim),
    slidingWindow: c.slidingWindow,
    softcap: c.softcap,
  };
  ops.createKvCache({ nSlots: 2, contextLength: 272, layers: uniformKvLayers(2, nKvHeads, headDim), kvType });
  const out: Float32Array[] = [];
  for (const [startPos, n] of STEPS) {
    const q = await setActivation(ops, randomF16(n * nHeads * headDim, next), n, nHeads * headDim);
    const k = await setActivation(ops, randomF16(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
    const v = await setActivation(ops, randomF16(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
    const o = ops.createActivation('o', n, nHeads * headDim);
    ops.beginStep({ tokens: new Int32Array(n), startPos, slot: 1 });
    ops.storeKv(1, k, v, n);
    ops.attention(o, q, 1, n, params);
    ops.endStep();
    out.push(await ops.read(o, n));
  }
  return out;
}

const CASES: Case[] = [
  { nHeads: 14, nKvHeads: 2, headDim: 64, slidingWindow: 0, softcap: 0 },
  { nHeads: 7, nKvHeads: 1, headDim: 36, slidingWindow: 0, softcap: 0 },
  { nHeads: 4, nKvHeads: 4, headDim: 64, slidingWindow: 150, softcap: 0 },
  { nHeads: 6, nKvHeads: 2, headDim: 6, slidingWindow: 0, softcap: 2.5 },
];

const features = detectWasmFeatures();
const CONFIGS: { variant: WasmVariant; threads: number }[] = [
  { variant: 'scalar', threads: 1 },
  { variant: 'simd128', threads: 1 },
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 1 },
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 2 },
];

for (const config of CONFIGS) {
  describe(`wasm f16 KV grouped attention (${config.variant} ×${config.threads})`, () => {
    it.each(CASES)(
      '$nHeads heads / $nKvHeads KV heads × $headDim, window $slidingWindow, softcap $softcap',
      async (c) => {
        const wasm = await createWasmOps(config);
        const f16 = await run(wasm, c, 'f16', 5);
        const f32 = await run(wasm, c, 'f32', 5);
        wasm.destroy();
        const ref = await run(createCpuOps(), c, 'f16', 5);
        for (let s = 0; s < STEPS.length; s++) {
          expect(f16[s].length).toBe(ref[s].length);
          for (let i = 0; i < ref[s].length; i++) {
            if (!Object.is(f16[s][i], f32[s][i]))
              expect.fail(`step ${s} [${i}]: f16 KV ${f16[s][i]} vs f32 KV ${f32[s][i]}`);
            if (!(Math.abs(f16[s][i] - ref[s][i]) <= 2e-4))
              expect.fail(`step ${s} [${i}]: ${f16[s][i]} vs reference ${ref[s][i]}`);
          }
        }
      },
    );
  });
}
