/**
 * A prompt holding an image vs llama.cpp's mtmd on WebGPU, both capability paths (test/helpers/image-logits-check.ts):
 * the image's rows as one non-causal step through the tiled prefill attention, its sliding window still applied.
 * The f16 path stores activations and KV in f16, hence its extra tolerance (as the model conformance suite's).
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, GPU_VARIANTS, getTestDevice } from '../helpers/gpu.js';
import { describeImageLogits } from '../helpers/image-logits-check.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  let device: GPUDevice | null = null;
  describeImageLogits(
    `webgpu ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
    },
    variant.preferF16 ? 5e-2 : 2e-3,
  );
}
