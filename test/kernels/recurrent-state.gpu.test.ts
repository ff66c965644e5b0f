/** Recurrent state snapshots and slot copies on WebGPU (state buffer reads, writes and copies; see the helper). */

import { afterAll, describe, it } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { checkRecurrentState } from '../helpers/recurrent-state-check.js';

describe('recurrent state on WebGPU (lfm2, qwen35, granitehybrid, nemotron_h, falcon-h1)', () => {
  afterAll(() => destroyTestGpu());
  for (const fixture of [
    'lfm2-q8_0-s1.gguf',
    'qwen35-q8_0-s1.gguf',
    'granitehybrid-q8_0-s1.gguf',
    'nemotron_h-q8_0-s2.gguf',
    'falcon-h1-q8_0-s1.gguf',
  ]) {
    for (const variant of GPU_VARIANTS) {
      it(`${fixture} ${variant.name}: a snapshot written back resumes; a slot copy carries the state`, async () => {
        const device = await getTestDevice(['shader-f16', 'subgroups']);
        const ops = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
        await checkRecurrentState(ops, variant.preferF16 ? 2e-2 : 1e-3, fixture);
      });
    }
  }
});
