/**
 * The 22-layer gemma3n model of test/reference/gemma3n-kv-sharing.test.ts (layers 20–21 reading layer 18's KV) on
 * WebGPU's f32 and f16 paths against llama.cpp's exact-math rows, with the limits of webgpu-model.gpu.test.ts
 * (2e-2, plus 2e-2 on the f16 path).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { checkDeepFixture, materializeDeepFixtures } from '../helpers/deep-fixtures.js';
import { destroyTestGpu, GPU_VARIANTS, getTestDevice } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());

describe('gemma3n KV sharing on WebGPU (22 layers)', () => {
  beforeAll(() => materializeDeepFixtures(), 120_000);

  for (const variant of GPU_VARIANTS) {
    it(`${variant.name}: logits match llama.cpp's exact-math rows`, async () => {
      const device = await getTestDevice(['shader-f16', 'subgroups']);
      const ops = await createWebGpuOps({
        device,
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
      });
      const { report } = await checkDeepFixture('gemma3n-q8_0-kv22-s3', ops);
      console.log(`[webgpu ${variant.name}] gemma3n kv22 deq ${report.maxAbsDequantF32?.toExponential(2)}`);
      expect(report.maxAbsDequantF32!).toBeLessThanOrEqual(2e-2 + (variant.preferF16 ? 2e-2 : 0));
    }, 300_000);
  }
});
