/**
 * Embedding rows as a forward pass's input (`Transformer.evalEmbeddings`, image chunks) on the CPU reference and
 * WASM backends (test/helpers/embedding-input-check.ts; WebGPU: test/kernels/webgpu-embedding-input.gpu.test.ts):
 * gemma3 (embedding scale, sliding-window layers; the architecture whose images attend non-causally) and llama.
 */

import v8 from 'node:v8';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { describeEmbeddingInput } from '../helpers/embedding-input-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describeEmbeddingInput('cpu', () => createCpuOps(), ['arch/gemma3-f16.gguf', 'arch/llama3-f16.gguf'], 1e-4);
describeEmbeddingInput('wasm', () => createWasmOps({ threads: 1 }), ['arch/gemma3-f16.gguf'], 2e-3);
