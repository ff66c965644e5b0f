/**
 * Multi-stream rope on WebGPU (rope_multi.wgsl) against the reference, on both capability paths: an image's grid
 * positions (consecutive and interleaved sections, wrapping sectors, an e section), text rows, and `setSequence`
 * back to text rows after an image step (test/helpers/rope-multi-scenario.ts).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS, relMaxAbs } from '../helpers/gpu.js';
import { MULTI_CASES, runMultiRope } from '../helpers/rope-multi-scenario.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  describe(`webgpu ${variant.name}: multi-stream rope`, () => {
    it('equals the reference on every case', async () => {
      const want = await runMultiRope(createCpuOps());
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const ops = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
      const got = await runMultiRope(ops);
      ops.destroy();
      got.forEach((g, c) => expect(relMaxAbs(g, want[c]!), MULTI_CASES[c]?.[0] ?? 'setSequence').toBeLessThan(2e-5));
    });
  });
}
