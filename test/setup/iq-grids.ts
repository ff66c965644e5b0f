/**
 * Vitest setup file: loads the IQ codebook grids (src/quant/iq-grids.ts) before each test file, as `loadTransformer`
 * does for a model with IQ tensors, so kernel and dequantizer tests can call the IQ types directly.
 */

import { loadIqGrids } from '../../src/quant/iq-grids.js';

await loadIqGrids();
