/**
 * Recurrent state of the hybrid MoE variants (lfm2moe: short-conv state; qwen35moe: conv window + DeltaNet state) on
 * the CPU reference and WASM backends: a snapshot written back resumes exactly, a slot copy carries the state — with
 * experts on the recurrent layers in the run (see recurrent-state-check.ts). The fixtures are ones whose routing has
 * no near-tie: WASM's batched and one-row matmuls differ by ~1e-6, which flips a near-tied expert (lfm2moe's sigmoid
 * router with its selection bias has many) and moves later logits by ~0.1 without any state being wrong.
 */

import v8 from 'node:v8';
import { describe, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { checkRecurrentState } from '../../helpers/recurrent-state-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

for (const fixture of ['lfm2moe-q8_0-l2-s22.gguf', 'qwen35moe-q8_0-l2-s22.gguf']) {
  describe(`recurrent state with experts (${fixture})`, () => {
    it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
      await checkRecurrentState(createCpuOps(), 0, fixture);
    });
    it('wasm: the same', async () => {
      await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, fixture);
    });
  });
}
