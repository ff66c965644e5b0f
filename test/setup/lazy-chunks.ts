/**
 * Vitest setup file: loads the IQ codebook grids (src/quant/iq-grids.ts) and the WebGPU feature shaders
 * (src/backend/webgpu/feature-shaders.ts) before each test file, as `loadTransformer` does for a model that needs
 * them, so kernel and dequantizer tests can call the IQ types and the recurrent / MoE / AltUp kernels directly; and
 * the WordPiece / unigram / RWKV / PLaMo-2 encoders (src/tokenizer/fragment-encoders.ts), as `loadTokenizer` does, so
 * tokenizer tests can call `createTokenizer` on such vocabularies; and the lazily loaded architecture entries (the
 * encoders, src/model/arch/index.ts), so tests can read their configs through `getArchitecture`.
 */

import { loadFeatureShaders } from '../../src/backend/webgpu/compose.js';
import { architectureNames, loadArchitecture } from '../../src/model/arch/index.js';
import { loadIqGrids } from '../../src/quant/iq-grids.js';
import { loadFragmentEncoders } from '../../src/tokenizer/fragment-encoder-registry.js';

await Promise.all([
  loadIqGrids(),
  loadFeatureShaders(),
  loadFragmentEncoders(),
  ...architectureNames().map(loadArchitecture),
]);
