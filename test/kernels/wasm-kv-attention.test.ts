/**
 * The WASM attention kernel over f16 / Q8_0 / Q4_0 KV caches read in place (wasm/assembly/attention-kv.ts) against
 * the reference backend with the same KV type (which dequantizes the rows and multiplies in f64): every kernel build,
 * GQA, sliding window, soft-capping, prompt then decode steps, head sizes with (64, 128) and without (32) llama.cpp's
 * Hadamard rotation, and head sizes the f16 path handles past its 32-column passes (80, 6); gpt-oss's per-head sink
 * logits on every KV type (f32 included).
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { KvType } from '../../src/backend/kv-type.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

const random = (n: number, next: () => number): Float32Array => Float32Array.from({ length: n }, () => next() * 2 - 1);

interface Case {
  readonly kvType: KvType;
  readonly nHeads: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  readonly slidingWindow: number;
  readonly softcap: number;
  /** Per-head sink logits (gpt-oss), random in ±3. */
  readonly sinks?: boolean;
}

/** Attention outputs of three steps (prompt of 37, one token, three tokens) on slot 1 of layer 1. */
async function run(ops: Ops, c: Case, seed: number): Promise<Float32Array[]> {
  const next = mulberry32(seed);
  const { nHeads, nKvHeads, headDim } = c;
  const params = {
    nHeads,
    nKvHeads,
    headDim,
    scale: 1 / Math.sqrt(headDim),
    slidingWindow: c.slidingWindow,
    softcap: c.softcap,
    sinks: c.sinks
      ? await ops.uploadWeight(
          { name: 'attn_sinks', type: GgmlType.F32, shape: [nHeads] },
          new Uint8Array(Float32Array.from({ length: nHeads }, () => 6 * next() - 3).buffer),
        )
      : null,
  };
  ops.createKvCache({ nSlots: 2, contextLength: 48, layers: uniformKvLayers(2, nKvHeads, headDim), kvType: c.kvType });
  const out: Float32Array[] = [];
  for (const [startPos, n] of [
    [0, 37],
    [37, 1],
    [38, 3],
  ]) {
    const q = await setActivation(ops, random(n * nHeads * headDim, next), n, nHeads * headDim);
    const k = await setActivation(ops, random(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
    const v = await setActivation(ops, random(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
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
  { kvType: 'q8_0', nHeads: 4, nKvHeads: 2, headDim: 64, slidingWindow: 0, softcap: 0 },
  { kvType: 'q8_0', nHeads: 2, nKvHeads: 1, headDim: 32, slidingWindow: 5, softcap: 0 },
  { kvType: 'q8_0', nHeads: 2, nKvHeads: 2, headDim: 128, slidingWindow: 0, softcap: 3 },
  { kvType: 'q4_0', nHeads: 4, nKvHeads: 2, headDim: 64, slidingWindow: 0, softcap: 0 },
  { kvType: 'q4_0', nHeads: 3, nKvHeads: 1, headDim: 96, slidingWindow: 7, softcap: 2.5 },
  { kvType: 'f16', nHeads: 4, nKvHeads: 2, headDim: 64, slidingWindow: 0, softcap: 0 },
  { kvType: 'f16', nHeads: 2, nKvHeads: 1, headDim: 80, slidingWindow: 4, softcap: 0 },
  { kvType: 'f16', nHeads: 2, nKvHeads: 2, headDim: 6, slidingWindow: 0, softcap: 2 },
  { kvType: 'f32', nHeads: 4, nKvHeads: 2, headDim: 64, slidingWindow: 5, softcap: 0, sinks: true },
  { kvType: 'f16', nHeads: 4, nKvHeads: 1, headDim: 64, slidingWindow: 0, softcap: 0, sinks: true },
  { kvType: 'q8_0', nHeads: 4, nKvHeads: 2, headDim: 64, slidingWindow: 7, softcap: 0, sinks: true },
  { kvType: 'q4_0', nHeads: 2, nKvHeads: 2, headDim: 64, slidingWindow: 0, softcap: 0, sinks: true },
];

const features = detectWasmFeatures();
const CONFIGS: { variant: WasmVariant; threads: number }[] = [
  { variant: 'scalar', threads: 1 },
  { variant: 'simd128', threads: 1 },
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 2 },
];

for (const config of CONFIGS) {
  describe(`wasm attention over a typed KV cache (${config.variant} ×${config.threads})`, () => {
    it.each(CASES)(
      '$kvType, $nHeads heads / $nKvHeads KV heads × $headDim, window $slidingWindow, softcap $softcap, sinks $sinks',
      async (c) => {
        const wasm = await createWasmOps(config);
        const got = await run(wasm, c, 11);
        const want = await run(createCpuOps(), c, 11);
        wasm.destroy();
        for (let s = 0; s < want.length; s++) {
          expect(got[s].length).toBe(want[s].length);
          for (let i = 0; i < want[s].length; i++) {
            if (!(Math.abs(got[s][i] - want[s][i]) <= 2e-4)) {
              expect.fail(`step ${s} [${i}]: ${got[s][i]} vs reference ${want[s][i]}`);
            }
          }
        }
      },
    );
  });
}
