/**
 * Vitest setup file: loads the IQ codebook grids (src/quant/iq-grids.ts) and the WebGPU feature shaders
 * (src/backend/webgpu/feature-shaders.ts) before each test file, as `loadTransformer` does for a model that needs
 * them, so kernel and dequantizer tests can call the IQ types and the recurrent / MoE / AltUp kernels directly.
 */

import { loadFeatureShaders } from '../../src/backend/webgpu/compose.js';
import { loadIqGrids } from '../../src/quant/iq-grids.js';

await Promise.all([loadIqGrids(), loadFeatureShaders()]);
