/**
 * The vision encoder on WebGPU vs llama.cpp mtmd, both capability paths (test/helpers/vit-ops-check.ts): the patch
 * GEMM, the tiled non-causal prefill attention over every patch, LayerNorm and GELU kernels, held to
 * 1e-3 relative on both capability paths (the f16 path, activations and KV stored in f16, measures ≤ 3e-4).
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, GPU_VARIANTS, getTestDevice } from '../helpers/gpu.js';
import { describeProjectorOps, describeVitOps } from '../helpers/vit-ops-check.js';

afterAll(() => destroyTestGpu());

for (const variant of GPU_VARIANTS) {
  let device: GPUDevice | null = null;
  describeVitOps(
    `webgpu ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
    },
    1e-3,
  );
  describeProjectorOps(
    `webgpu ${variant.name}`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
    },
    1e-3,
  );
}
