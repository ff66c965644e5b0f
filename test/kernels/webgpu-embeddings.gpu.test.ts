/**
 * Embedding conformance of the WebGPU backend (both capability paths) against llama.cpp's pooled embeddings of the
 * recorded fixtures with an embedding head (driver: test/helpers/embedding-conformance.ts). The f32+shared path is held
 * to cosine ≥ 0.9999 and max |Δ| ≤ 1e-3; the f16 path (f16 KV cache and gemm tiles: max |Δ| 1.1e-3 measured) to 5e-3.
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { runEmbeddingConformance } from '../helpers/embedding-conformance.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  let device: GPUDevice | null = null;
  runEmbeddingConformance(
    `webgpu ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
    },
    { maxAbs: variant.preferF16 ? 5e-3 : 1e-3 },
  );
}
