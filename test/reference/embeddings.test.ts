/**
 * Embedding conformance of the plain-TS reference and WASM backends against llama.cpp's pooled embeddings of the
 * recorded fixtures with an embedding head (test/fixtures/models/*-embd-*.json; driver in
 * test/helpers/embedding-conformance.ts). WASM also runs with 5-token steps, so longer inputs are chunked.
 */

import v8 from 'node:v8';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { runEmbeddingConformance } from '../helpers/embedding-conformance.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

runEmbeddingConformance('cpu reference', () => createCpuOps());
runEmbeddingConformance('wasm', () => createWasmOps({ threads: 1 }));
runEmbeddingConformance('wasm ×2 threads, 5-token steps', () => createWasmOps({ threads: 2 }), { ubatchSize: 5 });
