/**
 * A multi-sequence step after an image on an M-RoPE model (qwen2vl) on WebGPU, both capability paths
 * (test/helpers/mrope-rows-check.ts): each row's own rope streams (`setSequence` with positions, each written at its
 * own offset of the step's position buffer) give the logits of its token evaluated alone, and the step is one
 * submission like a text step (it was one per sequence and layer).
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
      const submissions = { image: 0, text: 0 };
      const diffs = await mropeRowsDiffs(ops, (step, phase) => {
        // before: the count so far; after: the count since then
        submissions[step] = phase === 'before' ? ops.stats.submissions : ops.stats.submissions - submissions[step];
      });
      diffs.forEach((d, r) => expect(d, `row ${r}`).toBeLessThan(variant.preferF16 ? 5e-2 : 2e-3));
      // The step and its first read, as for the same step over text rows (it was one submission per row and layer).
      expect(submissions.image, 'submissions of the step after an image').toBe(submissions.text);
      expect(submissions.text).toBeLessThanOrEqual(2);
    });
  });
}
