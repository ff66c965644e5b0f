/**
 * Prefill of the recurrent layers on WebGPU (see recurrent-prefill-check.ts): the per-head prefill kernels
 * (delta_net rule_heads, mamba2 scan_heads, tiles of 8 tokens) against the per-row decode kernels and a snapshot
 * resume, and against the CPU reference.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { maxAbsDiff } from '../../src/model/conformance.js';
import { destroyTestGpu, getTestDevice, GPU_VARIANTS } from '../helpers/gpu.js';
import { prefillChecks, RECURRENT_PREFILL_FIXTURES } from '../helpers/recurrent-prefill-check.js';

describe('recurrent prefill on WebGPU', () => {
  afterAll(() => destroyTestGpu());
  for (const [name, fixture] of RECURRENT_PREFILL_FIXTURES) {
    for (const variant of GPU_VARIANTS) {
      it(`${name} ${variant.name}: a long prompt equals per-token decode and a snapshot resume, and the CPU`, async () => {
        const device = await getTestDevice(['shader-f16', 'subgroups']);
        const ops = await createWebGpuOps({ device, preferF16: variant.preferF16, useSubgroups: variant.useSubgroups });
        const gpu = await prefillChecks(ops, fixture, variant.preferF16 ? 0.3 : 1e-2);
        const cpu = await prefillChecks(createCpuOps(), fixture, 2e-4);
        expect(maxAbsDiff(gpu, cpu)).toBeLessThanOrEqual(variant.preferF16 ? 0.5 : 5e-2);
      });
    }
  }
});
