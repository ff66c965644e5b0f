/**
 * Embedding rows as a forward pass's input (`Transformer.evalEmbeddings`, image chunks) on WebGPU, both capability
 * paths (test/helpers/embedding-input-check.ts): `setRows` writes the residual stream, a non-causal chunk matches
 * the reference row by row. f16 storage rounds the activations, hence its wider tolerance.
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { describeEmbeddingInput } from '../helpers/embedding-input-check.js';
import { destroyTestGpu, GPU_VARIANTS, getTestDevice } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  let device: GPUDevice | null = null;
  describeEmbeddingInput(
    `webgpu ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
    },
    ['arch/gemma3-f16.gguf'],
    variant.preferF16 ? 5e-2 : 2e-3,
  );
}
