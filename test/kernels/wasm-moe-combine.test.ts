/**
 * The WASM backend's mixture-of-experts weighted sum (`moeCombine` → the `moe_combine` kernel,
 * wasm/assembly/moe-combine.ts) in every kernel build: out[t] = Σ_s w[t, s] · y[t·nUsed + s], bit-identical to f32
 * products added slot by slot in order, for row lengths off a multiple of 4 (the scalar tail) and several tokens.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createWasmOps, type WasmVariant } from '../../src/backend/wasm/index.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const VARIANTS: WasmVariant[] = ['scalar', 'simd128', 'relaxed-simd'];

describe('wasm moeCombine', () => {
  for (const variant of VARIANTS) {
    for (const cols of [7, 64]) {
      it(`${variant}: f32 products summed slot by slot (cols ${cols}, 3 tokens × 3 slots)`, async () => {
        const ops = await createWasmOps({ threads: 1, variant });
        try {
          const [nUsed, n] = [3, 3];
          const y = Float32Array.from({ length: n * nUsed * cols }, (_, i) => Math.sin(i * 0.7) * 4);
          const w = Float32Array.from({ length: n * nUsed }, (_, i) => 0.1 + ((i * 0.37) % 1));
          const yAct = ops.createActivation('y', n * nUsed, cols);
          const wAct = ops.createActivation('w', n, nUsed);
          const out = ops.createActivation('out', n, cols);
          ops.beginStep({ tokens: Int32Array.from({ length: n * nUsed }, (_, i) => i), startPos: 0, slot: 0 });
          ops.setRows(yAct, y, n * nUsed);
          ops.setRows(wAct, w, n);
          ops.moeCombine(out, yAct, wAct, n);
          ops.endStep();
          const got = await ops.read(out, n);
          const want = new Float32Array(n * cols);
          for (let t = 0; t < n; t++) {
            for (let j = 0; j < cols; j++) {
              let acc = Math.fround(w[t * nUsed]! * y[t * nUsed * cols + j]!);
              for (let s = 1; s < nUsed; s++) {
                acc = Math.fround(acc + Math.fround(w[t * nUsed + s]! * y[(t * nUsed + s) * cols + j]!));
              }
              want[t * cols + j] = acc;
            }
          }
          expect(Array.from(got)).toEqual(Array.from(want));
        } finally {
          ops.destroy();
        }
      });
    }
  }
});
