/**
 * A prompt holding an image vs llama.cpp's mtmd on the CPU reference and WASM backends
 * (test/helpers/image-logits-check.ts; WebGPU: test/kernels/webgpu-image-logits.gpu.test.ts).
 */

import v8 from 'node:v8';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { describeImageLogits } from '../helpers/image-logits-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describeImageLogits('cpu', () => createCpuOps(), 0);
describeImageLogits('wasm', () => createWasmOps({ threads: 1 }), 0);
