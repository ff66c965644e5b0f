/**
 * gemma3n with n sequences decoded together (`evalRows`) equals each sequence run alone on WebGPU's f32 path: the
 * AltUp primitives (per-row coefficients, magnitudes and sparsity cutoffs) keep every row to itself.
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';
import { recordedModelPath } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

const variant = GPU_VARIANTS.find((v) => !v.preferF16)!;
let device: GPUDevice | null = null;
describeMultiSequence(
  `webgpu ${variant.name} gemma3n`,
  async () => {
    device ??= await getTestDevice(['shader-f16', 'subgroups']);
    return createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
  },
  [recordedModelPath('gemma3n-q8_0-s1')],
  2e-3,
);
