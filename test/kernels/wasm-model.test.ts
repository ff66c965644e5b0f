/**
 * Full-model conformance of the WASM backend against llama.cpp's logits, through the shared driver
 * (test/helpers/conformance-suite.ts): every fixture under ../shared/models with a reference JSON, greedy 30 tokens
 * for stories260K and models/derived. Runs the best build this Node can enable (relaxed-simd via the V8 flag).
 *
 * Tolerance vs llama.cpp's dequantized-F32 rows: 2e-2 (as every non-reference backend) plus, for files with
 * quantized weights, 0.5 for the Q8 rounding of activations that the fused kernels multiply — the same rounding
 * llama.cpp's own CPU path does, whose gap to its dequantized-F32 rows is 0.07–0.44 on these fixtures (ours:
 * 0.07–0.47). Float-weight files use f32 activations and get no extra. The F32-KV limits are the reference table's.
 */

import v8 from 'node:v8';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { formatReport, runConformanceSuite } from '../helpers/conformance-suite.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

/** Extra max |Δ| from Q8 activation rounding, for files whose matmuls use quantized weights. */
const Q8_ACTIVATION_ROUNDING = 0.5;

runConformanceSuite('wasm', () => createWasmOps({ threads: 1 }), {
  tolerances: (base, fixture) => ({
    ...base,
    dequantF32: Math.max(base.dequantF32, 2e-2) + (fixture.weights === 'quantized' ? Q8_ACTIVATION_ROUNDING : 0),
  }),
  onReport: (fixture, report) => console.log(formatReport(fixture.id, report)),
});

// The same checks with two threads and 5-token steps (chunked prefill: one 4-token kernel tile plus one row), on the
// stories260K and lfm2 families only to keep the run short.
runConformanceSuite('wasm ×2 threads, 5-token steps', () => createWasmOps({ threads: 2 }), {
  tolerances: (base, fixture) => ({
    ...base,
    dequantF32: Math.max(base.dequantF32, 2e-2) + (fixture.weights === 'quantized' ? Q8_ACTIVATION_ROUNDING : 0),
  }),
  // lfm2 too: its convolution state must carry across steps exactly as within one.
  filter: (fixture) => fixture.id.includes('stories260K') || fixture.id.includes('lfm2'),
  ubatchSize: 5,
});
