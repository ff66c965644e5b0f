/**
 * n sequences decoded together (`Transformer.evalRows`) equal each run alone on WebGPU, on both capability paths
 * (test/helpers/multi-sequence-check.ts): the per-sequence rope/KV/attention dispatches after `setSequence`, and the
 * row gather/scatter of `copyRows` with a destination row. f16 KV and gemm tiles round differently for a 4-row
 * step than for a 1-row one, hence the wider f16 tolerance.
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';

afterAll(() => destroyTestGpu());

// Both kernel sets: 'auto' (lavapipe: the software set) and 'hardware' (what a GPU gets, forced here).
for (const [variant, kernels] of [
  ...GPU_VARIANTS.map((v) => [v, 'auto'] as const),
  [GPU_VARIANTS[0], 'hardware'] as const,
]) {
  let device: GPUDevice | null = null;
  describeMultiSequence(
    `webgpu ${variant.name} ${kernels} kernels`,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups, kernels });
    },
    ['stories260K.gguf', 'arch/gemma2-f16.gguf'],
    variant.preferF16 ? 5e-2 : 2e-3,
  );
}
