/**
 * The WASM backend's mixture-of-experts ops (routing, gather matmul over the selected experts, weighted sum, gated
 * add) against the reference backend, through `expectExpertOpsMatch`: fused Q8 kernels (Q8_0 and MXFP4 row pairs with
 * an odd number of rows per expert, Q4_K; Q4_K, Q5_0, Q6_K and Q8_0 experts of whole 4-row groups stored in groups),
 * f32-activation kernels (F16), a dequantize-only type (Q2_K); decode (one token) and grouped prefill; one and two
 * threads. An unselected expert holds NaN, so reading it fails the check.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { tensorByteLength } from '../../src/quant/index.js';
import { EXPERT_CASES, type ExpertCase, expectExpertOpsMatch, SOFTMAX_NORM } from '../helpers/moe-ops-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const CASES: ExpertCase[] = [
  ...EXPERT_CASES,
  // MXFP4 row pairs with an odd number of rows per expert (pairs straddle experts) and an odd block count; decode.
  { type: GgmlType.MXFP4, nExperts: 5, rows: 33, k: 96, nUsed: 3, n: 1, route: SOFTMAX_NORM },
  // Decode of a Qwen3-MoE-like layer (top-8 of 9, Q4_K): every expert has one row, read and written in place.
  { type: GgmlType.Q4_K, nExperts: 9, rows: 16, k: 256, nUsed: 8, n: 1, route: SOFTMAX_NORM },
  // Experts of whole 4-row groups are stored in groups (relaxed build): Q6_K and Q5_0 decode and grouped prefill
  // (the stored kernels' 1-, 4- and 8-token tiles), Q4_K with rows off a multiple of 4 (kept as GGUF rows).
  { type: GgmlType.Q6_K, nExperts: 5, rows: 12, k: 512, nUsed: 3, n: 1, route: SOFTMAX_NORM },
  { type: GgmlType.Q6_K, nExperts: 3, rows: 8, k: 256, nUsed: 2, n: 13, route: SOFTMAX_NORM },
  { type: GgmlType.Q5_0, nExperts: 6, rows: 20, k: 96, nUsed: 4, n: 9, route: SOFTMAX_NORM },
  { type: GgmlType.Q4_K, nExperts: 4, rows: 6, k: 256, nUsed: 2, n: 3, route: SOFTMAX_NORM },
  // F16 (f32 activations) decode: the in-place row with a float kernel.
  { type: GgmlType.F16, nExperts: 4, rows: 9, k: 32, nUsed: 2, n: 1, route: SOFTMAX_NORM },
];

describe('wasm mixture-of-experts ops vs the reference', () => {
  it('stores 3-D expert stacks in 4-row groups when every expert is whole groups (relaxed-SIMD build)', async () => {
    const wasm = await createWasmOps({ threads: 1, variant: 'relaxed-simd' });
    try {
      const stored = async (rows: number): Promise<unknown> => {
        const shape = [256, rows, 3];
        const bytes = new Uint8Array(tensorByteLength(GgmlType.Q4_K, shape));
        const w = await wasm.uploadWeight({ name: `exps${rows}`, type: GgmlType.Q4_K, shape }, bytes);
        return (w as unknown as { rows4: unknown }).rows4;
      };
      expect(await stored(8)).not.toBeNull();
      expect(await stored(6)).toBeNull();
    } finally {
      wasm.destroy();
    }
  });

  for (const threads of [1, 2]) {
    it(`matches on every case (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
      const wasm = await createWasmOps({ threads });
      try {
        for (const c of CASES) await expectExpertOpsMatch(wasm, createCpuOps(), c, 2e-2);
      } finally {
        wasm.destroy();
      }
    }, 60_000);
  }
});
