/**
 * Hybrid recurrent models decode several sequences per step on WebGPU (`Ops.recurrentRows`): the short_conv, delta_net
 * and mamba2 kernels take each row of a multi-sequence step as one token of its own sequence (`seqs`, `seq_at`,
 * `seq_fresh`; ≤ 8 rows per dispatch), so n sequences decoded together equal each run alone — rows in shuffled slot
 * order (test/helpers/multi-sequence-check.ts) and rows at different positions, one starting fresh in a used slot, with
 * 4 and with 10 sequences (two dispatch chunks; test/helpers/recurrent-rows-check.ts). The f32 path, and the f16 one
 * for two fixtures (wider tolerance: its matmuls round differently for a multi-row step).
 */

import { afterAll } from 'vitest';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';
import { describeRecurrentRows } from '../helpers/recurrent-rows-check.js';
import { recordedModelPath } from '../helpers/shared-path.js';

afterAll(() => destroyTestGpu());

let device: GPUDevice | null = null;
const makeOps = async () => {
  device ??= await getTestDevice([]);
  return createWebGpuOps({ device, preferF16: false, useSubgroups: false });
};
const FIXTURES = ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'granitehybrid-q8_0-s1', 'falcon-h1-q8_0-s1'];
describeMultiSequence('webgpu f32 hybrid', makeOps, FIXTURES.map(recordedModelPath), 2e-3);
describeRecurrentRows('webgpu f32', makeOps, FIXTURES, 2e-3);
describeRecurrentRows('webgpu f32', makeOps, ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'nemotron_h-q8_0-s2'], 2e-3, 10);
// f16 storage and subgroups: the matmuls round differently for a multi-row step, the recurrent kernels are the same.
let f16Device: GPUDevice | null = null;
const makeF16Ops = async () => {
  f16Device ??= await getTestDevice(['shader-f16', 'subgroups']);
  return createWebGpuOps({ device: f16Device, preferF16: true, useSubgroups: true });
};
describeRecurrentRows('webgpu f16', makeF16Ops, ['qwen35-q8_0-s1', 'granitehybrid-q8_0-s1'], 5e-2);
