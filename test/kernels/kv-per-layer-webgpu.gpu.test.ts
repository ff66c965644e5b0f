/**
 * Per-layer KV geometry (issue #13) on WebGPU, both capability paths: see `helpers/kv-per-layer.ts`; and the KV types
 * it refuses (issue #20).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, GPU_VARIANTS, getTestGpu } from '../helpers/gpu.js';
import { expectGeometryRefused, expectPerLayerKv } from '../helpers/kv-per-layer.js';
import { thrownLlmError } from '../helpers/llm-error.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  describe(`webgpu ${variant.name}: a KV cache with per-layer geometry`, () => {
    it('gives each layer what a cache of that layer alone gives; persists and copies per layer', async () => {
      const ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
      });
      const isF16 = ops.description.includes('f16');
      await expectPerLayerKv(ops, isF16 ? 4e-3 : 2e-5, isF16 ? 2 : 4);
      expectGeometryRefused(ops);
      // A KV type it cannot store (issue #20: only its own float type so far) is a clear error, nothing allocated.
      const other = isF16 ? 'f32' : 'f16';
      for (const kvType of [other, 'q8_0', 'q4_0'] as const) {
        const e = thrownLlmError(() => ops.createKvCache({ nSlots: 1, contextLength: 4, layers: [], kvType }));
        expect(e.code).toBe('unsupported-type');
        expect(e.message).toContain(`kvType '${kvType}'`);
      }
      ops.destroy();
    });
  });
}
