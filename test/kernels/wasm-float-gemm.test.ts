/**
 * WASM F32/F16 multi-token matmuls through gemm_f32's 3-row × 3-token tiles (two passes over k;
 * src/backend/wasm/float-gemm.ts) are bit-identical to the per-token gemv path (one token per call), on every kernel
 * build and two threads: row counts off a multiple of 3 (rows outside every triple), token counts off a multiple of 3,
 * row lengths off a multiple of 8 (the lane tail), and more tokens than one cache block of the widest rows.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { writeF16 } from '../../src/quant/half.js';
import { mulberry32 } from '../helpers/mulberry32.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const features = detectWasmFeatures();
const CONFIGS: { variant: WasmVariant; threads: number }[] = [
  { variant: 'scalar', threads: 1 },
  { variant: 'simd128', threads: 1 },
  ...(features.relaxedSimd ? [{ variant: 'relaxed-simd' as const, threads: 1 }] : []),
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 2 },
];

/** [k, nRows, nTokens] */
const SHAPES: [number, number, number][] = [
  [37, 5, 7],
  [64, 6, 3],
  [589, 34, 10],
  [4099, 9, 35], // one cache block is 31 tokens of 4099 values
];

describe('WASM float GEMM tiles', () => {
  for (const { variant, threads } of CONFIGS) {
    for (const type of [GgmlType.F32, GgmlType.F16]) {
      it(`${variant} ×${threads} ${type === GgmlType.F16 ? 'F16' : 'F32'}: n tokens at once = n single-token calls, bit for bit`, async () => {
        const ops = await createWasmOps({ variant, threads });
        const rand = mulberry32(7);
        for (const [k, nRows, n] of SHAPES) {
          const w = Float32Array.from({ length: k * nRows }, () => rand() * 2 - 1);
          let bytes = new Uint8Array(w.buffer);
          if (type === GgmlType.F16) {
            bytes = new Uint8Array(w.length * 2);
            for (let i = 0; i < w.length; i++) writeF16(bytes, i * 2, w[i]!);
          }
          const weight = await ops.uploadWeight({ name: `w${k}`, type, shape: [k, nRows] }, bytes);
          const x = ops.createActivation(`x${k}`, n, k + 3); // rows wider than k: the contiguous copy
          const one = ops.createActivation(`x1_${k}`, 1, k);
          const out = ops.createActivation(`o${k}`, n, nRows);
          const out1 = ops.createActivation(`o1_${k}`, 1, nRows);
          const xs = Float32Array.from({ length: n * (k + 3) }, () => rand() * 2 - 1);
          ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
          ops.setRows(x, xs, n);
          ops.matmul(out, x, weight, n);
          const all = await ops.read(out, n);
          for (let t = 0; t < n; t++) {
            ops.setRows(one, xs.subarray(t * (k + 3), t * (k + 3) + k), 1);
            ops.matmul(out1, one, weight, 1);
            const row = await ops.read(out1, 1);
            expect(all.subarray(t * nRows, (t + 1) * nRows), `k ${k}, token ${t}`).toEqual(row);
          }
          ops.endStep();
        }
        ops.destroy();
      });
    }
  }
});
