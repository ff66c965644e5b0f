/**
 * The WASM backend's mixture-of-experts ops (routing, gather matmul over the selected experts, weighted sum, gated
 * add) against the reference backend, through `expectExpertOpsMatch`: fused Q8 kernels (Q8_0 and MXFP4 row pairs with
 * an odd number of rows per expert, Q4_K), f32-activation kernels (F16), a dequantize-only type (Q2_K); decode (one token)
 * and grouped prefill; one and two threads. An unselected expert holds NaN, so reading it fails the check.
 */

import v8 from 'node:v8';
import { describe, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { EXPERT_CASES, type ExpertCase, expectExpertOpsMatch, SOFTMAX_NORM } from '../helpers/moe-ops-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const CASES: ExpertCase[] = [
  ...EXPERT_CASES,
  // MXFP4 row pairs with an odd number of rows per expert (pairs straddle experts) and an odd block count; decode.
  { type: GgmlType.MXFP4, nExperts: 5, rows: 33, k: 96, nUsed: 3, n: 1, route: SOFTMAX_NORM },
  // Decode of a Qwen3-MoE-like layer (top-8 of 9, Q4_K): every expert has one row, read and written in place.
  { type: GgmlType.Q4_K, nExperts: 9, rows: 16, k: 256, nUsed: 8, n: 1, route: SOFTMAX_NORM },
  // F16 (f32 activations) decode: the in-place row with a float kernel.
  { type: GgmlType.F16, nExperts: 4, rows: 9, k: 32, nUsed: 2, n: 1, route: SOFTMAX_NORM },
];

describe('wasm mixture-of-experts ops vs the reference', () => {
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
