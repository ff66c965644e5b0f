/**
 * Several sequences per step on hybrid recurrent models, CPU reference and WASM (test/helpers/recurrent-rows-check.ts:
 * rows at different positions, one starting fresh in a used slot; logits and final states equal each sequence alone
 * — exactly on the CPU; WebGPU: test/kernels/webgpu-recurrent-rows.gpu.test.ts).
 */

import v8 from 'node:v8';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { describeRecurrentRows } from '../../helpers/recurrent-rows-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const FIXTURES = ['qwen35-q8_0-s1', 'lfm2-q8_0-s1', 'granitehybrid-q8_0-s1', 'nemotron_h-q8_0-s2', 'falcon-h1-q8_0-s1'];

describeRecurrentRows('cpu', () => createCpuOps(), FIXTURES, 0);
describeRecurrentRows('wasm', () => createWasmOps({ threads: 1 }), FIXTURES, 1e-4);
