/**
 * A multi-sequence step after an image on an M-RoPE model (qwen2vl) on WebGPU, both capability paths
 * (test/helpers/mrope-rows-check.ts): each row's own rope streams (`setSequence` with positions, written after the
 * previous sequence's dispatches) give the logits of its token evaluated alone.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { mropeRowsDiffs } from '../helpers/mrope-rows-check.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  describe(`webgpu ${variant.name}: n sequences after an image (M-RoPE)`, () => {
    it('each row equals its token evaluated alone', { timeout: 120_000 }, async () => {
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const ops = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
      const diffs = await mropeRowsDiffs(ops);
      diffs.forEach((d, r) => expect(d, `row ${r}`).toBeLessThan(variant.preferF16 ? 5e-2 : 2e-3));
    });
  });
}
