/** Recurrent state snapshots and slot copies on WebGPU for the hybrid MoE variants (experts on recurrent layers). */

import { afterAll, describe, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { checkRecurrentState } from '../helpers/recurrent-state-check.js';

describe('recurrent state on WebGPU (lfm2moe, qwen35moe)', () => {
  afterAll(() => destroyTestGpu());
  for (const fixture of ['lfm2moe-q8_0-l2-s22.gguf', 'qwen35moe-q8_0-l2-s22.gguf']) {
    for (const variant of GPU_VARIANTS) {
      it(`${fixture} ${variant.name}: a snapshot written back resumes; a slot copy carries the state`, async () => {
        const device = await getTestDevice(['shader-f16', 'subgroups']);
        const ops = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
        await checkRecurrentState(ops, variant.preferF16 ? 2e-2 : 1e-3, fixture);
      });
    }
  }
});
