/**
 * The WASM f16-KV attention's grouped path (wasm/assembly/attention-widen.ts + attention.ts: each block of K/V rows
 * widened to f32 once per GQA group, then the f32 register tiles) at contexts of several 128-position blocks:
 * - bit for bit the f32-KV kernel run on the same (f16-representable) q, K and V, on every build and with two
 *   threads — so the widening is exact and the f16 path is the f32 path's arithmetic (the former head-by-head f16
 *   kernel summed in another order and would not match);
 * - within the typed-KV test's tolerance of the reference backend with f16 KV (which multiplies in f64).
 * Cases: Qwen2.5-0.5B's group of 7 heads per KV head, MHA, a sliding window, soft-capping, head sizes with a 4-column
 * (36) and a scalar (6) tail past the 8-value widening.
 * Calls whose widened f32 K/V fit in cache (all of these) take the widened path by default
 * (src/backend/wasm/attention-widen.ts: the layer's K/V widened once per call, then the f32 kernel): the same
 * equalities hold for it, and the spied widenKv must have widened every step with the expected positions (the last
 * step's window starts past position 0); the grouped path runs with widenKv made to decline (as an older kernel build
 * without widen_f16_rows does).
 */

import { describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { type KvType, roundQueryForKv } from '../../src/backend/kv-type.js';
import type { AttentionParams, Ops } from '../../src/backend/ops.js';
import * as widen from '../../src/backend/wasm/attention-widen.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

vi.mock('../../src/backend/wasm/attention-widen.js', async (original) => {
  const actual = await original<typeof import('../../src/backend/wasm/attention-widen.js')>();
  return { ...actual, widenKv: vi.fn(actual.widenKv) };
});

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
  [265, 5], // with the window of 150: positions 116 … 269
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
        const widenKv = vi.mocked(widen.widenKv);
        widenKv.mockClear();
        const widened = await run(wasm, c, 'f16', 5);
        expect(widenKv.mock.results.map((r) => r.value !== null)).toEqual([true, true, true, true]);
        const firsts = STEPS.map(([startPos]) =>
          c.slidingWindow > 0 ? Math.max(0, startPos - c.slidingWindow + 1) : 0,
        );
        expect(widenKv.mock.calls.map((a) => a[6])).toEqual(
          STEPS.map(([startPos, n], i) => ({ first: firsts[i], rows: startPos + n - firsts[i]! })),
        );
        const real = widenKv.getMockImplementation()!;
        widenKv.mockImplementation(() => null); // the grouped f16 path
        const grouped = await run(wasm, c, 'f16', 5);
        widenKv.mockImplementation(real);
        const f32 = await run(wasm, c, 'f32', 5);
        wasm.destroy();
        const ref = await run(createCpuOps(), c, 'f16', 5);
        for (const [path, f16] of [
          ['widened', widened],
          ['grouped', grouped],
        ] as const) {
          for (let s = 0; s < STEPS.length; s++) {
            expect(f16[s].length).toBe(ref[s].length);
            for (let i = 0; i < ref[s].length; i++) {
              if (!Object.is(f16[s][i], f32[s][i]))
                expect.fail(`${path}, step ${s} [${i}]: f16 KV ${f16[s][i]} vs f32 KV ${f32[s][i]}`);
              if (!(Math.abs(f16[s][i] - ref[s][i]) <= 2e-4))
                expect.fail(`${path}, step ${s} [${i}]: ${f16[s][i]} vs reference ${ref[s][i]}`);
            }
          }
        }
      },
    );
  });
}

describe('widenRange', () => {
  const params = (nKvHeads: number, extra: Partial<AttentionParams> = {}): AttentionParams => ({
    nHeads: 14,
    nKvHeads,
    headDim: 64,
    scale: 0.125,
    slidingWindow: 0,
    softcap: 0,
    ...extra,
  });
  it('widens f16 K/V while the f32 copy fits in cache (8 MiB for a row, 16 MiB for a batch of 4+)', () => {
    expect(widen.widenRange(params(2), 1, 4095, 1)).toEqual({ first: 0, rows: 4096 }); // 4 MiB
    expect(widen.widenRange(params(7), 1, 4095, 1).rows).toBe(0); // 14 MiB, one row: grouped path
    expect(widen.widenRange(params(7), 1, 4032, 64)).toEqual({ first: 0, rows: 4096 }); // 14 MiB, a batch
    expect(widen.widenRange(params(14), 1, 4032, 64).rows).toBe(0); // 28 MiB
    expect(widen.widenRange(params(14, { slidingWindow: 1024 }), 1, 4095, 1)).toEqual({
      first: 3072,
      rows: 1024,
    });
  });
  it('leaves other KV kinds and non-causal calls alone', () => {
    expect(widen.widenRange(params(2), 0, 100, 1).rows).toBe(0);
    expect(widen.widenRange(params(2), 2, 100, 1).rows).toBe(0);
    expect(widen.widenRange(params(2, { causal: false }), 1, 100, 4).rows).toBe(0);
  });
});
