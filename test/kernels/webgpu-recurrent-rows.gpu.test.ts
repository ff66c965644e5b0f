/**
 * Hybrid recurrent models decode several sequences per step on WebGPU (`Ops.recurrentRows`): the short-conv,
 * DeltaNet and Mamba-2 kernels run per sequence of the step (their `row0` and each row's slot state), so n sequences
 * decoded together equal each run alone (test/helpers/multi-sequence-check.ts: rows in shuffled slot order, at
 * different positions). The f32 path (the f16 one shares the recurrent kernels, which are f32 throughout for decode).
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';
import { recordedModelPath } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

let device: GPUDevice | null = null;
describeMultiSequence(
  'webgpu f32 hybrid',
  async () => {
    device ??= await getTestDevice([]);
    return createWebGpuOps({ device, preferF16: false, useSubgroups: false });
  },
  ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'granitehybrid-q8_0-s1', 'falcon-h1-q8_0-s1'].map((f) => recordedModelPath(f)),
  2e-3,
);
