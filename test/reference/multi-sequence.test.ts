/**
 * n sequences decoded together (`Transformer.evalRows`) equal each run alone, on the CPU reference and WASM
 * backends (test/helpers/multi-sequence-check.ts; WebGPU: test/kernels/webgpu-multi-sequence.gpu.test.ts).
 * Fixtures: llama (stories260K, its Q4_0 for WASM's quantized 4-row kernels), gemma2 (sliding window, soft-caps,
 * post-norms) and qwen3 (q/k norms); also with q8_0 and q4_0 KV.
 */

import v8 from 'node:v8';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { describeMultiSequence } from '../helpers/multi-sequence-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describeMultiSequence(
  'cpu',
  () => createCpuOps(),
  ['stories260K.gguf', 'arch/gemma2-f16.gguf', 'arch/qwen3-f16.gguf'],
  1e-4,
);
describeMultiSequence(
  'wasm',
  () => createWasmOps({ threads: 1 }),
  ['stories260K.gguf', 'derived/stories260K-q4_0.gguf', 'arch/gemma2-f16.gguf', 'arch/qwen3-q8_0.gguf'],
  2e-3,
);
// Quantized KV (rows stored in ggml blocks): the per-sequence store and attention after setSequence read their own slot.
for (const kvType of ['q8_0', 'q4_0'] as const) {
  describeMultiSequence('cpu', () => createCpuOps(), ['arch/llama3-f16.gguf', 'arch/qwen3-f16.gguf'], 1e-4, kvType);
  describeMultiSequence('wasm', () => createWasmOps({ threads: 1 }), ['arch/gemma2-f16.gguf'], 2e-3, kvType);
}
