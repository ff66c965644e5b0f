/**
 * gemv_sg with Q8 activations (issue 23: a `dot4I8Packed` variant where the adapter has packed 4×8-bit integer dot
 * products; lavapipe offers `packed_4x8_integer_dot_product`). x is quantised per 32-element block as llama.cpp's
 * Q8_0 and dotted with the row-split Q4_0 / Q8_0 blocks as integers, so the kernel must match the product of the
 * dequantized weights with x quantised by the quant registry's Q8_0 (quantize_row_q8_0's semantics) far closer than
 * the f32-activation product, which a silently unused Q8 path would match instead. Then the whole model: conformance against llama.cpp with the variant forced (`int8Dot: true`).
 */

import { afterAll, describe, expect, it } from 'vitest';
import { GEMV_SG_ROWS } from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvSgInt8, gemvSgQuant, gemvSgRowsPerSubgroup } from '../../src/backend/webgpu/gemv-sg-quant.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { getGpuQuantLayout, repackRows } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { formatReport, runConformanceSuite } from '../helpers/conformance-suite.js';
import { runGemv } from '../helpers/gemv-dispatch.js';
import { collectGpuErrors, destroyTestGpu, getTestDevice, makeWeight, nmseOf, randoms } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());
const gpuErrors = collectGpuErrors();

/** x quantised to Q8_0 blocks and back (llama.cpp's activation rounding for Q4_0 / Q8_0 weights). */
function q8RoundTrip(x: Float32Array): Float32Array {
  const q8 = getQuantType(GgmlType.Q8_0);
  const bytes = new Uint8Array((x.length / 32) * q8.blockBytes); // (k / 32) blocks
  q8.quantizeRow!(x, bytes);
  const out = new Float32Array(x.length); // (k) f32
  q8.dequantizeRow(bytes, out, x.length);
  return out;
}

describe('gemv_sg with Q8 activations (dot4I8Packed)', () => {
  for (const type of [GgmlType.Q4_0, GgmlType.Q8_0]) {
    for (const wgSize of [64, 256]) {
      it(`${GgmlType[type]}, workgroup of ${wgSize}: equals W·q8(x) (llama.cpp's Q8_0 activations)`, async () => {
        const device = await getTestDevice(['subgroups']);
        const k = wgSize === 256 ? 4096 : 896;
        const nRows = 37;
        const layout = getGpuQuantLayout(type, 'w', 'hardware');
        expect(gemvSgInt8(layout, true)).toBe(true);
        const { bytes, values } = makeWeight(type, k, nRows, 21 + type);
        const packed = repackRows(layout, bytes, k, { rowStart: 0, nRows });
        const xv = randoms(k, 9);
        const quant = gemvSgQuant(layout, true);
        const got = await runGemv({
          device,
          kernel: 'gemv_sg',
          layout,
          quant: { name: quant.name, wgsl: quant.wgsl },
          packed,
          k,
          nRows,
          x: xv,
          wgSize,
          rowsPerWorkgroup: GEMV_SG_ROWS,
          constants: { ROWS: GEMV_SG_ROWS, R: gemvSgRowsPerSubgroup(layout), K: k, Q8_X: true },
          subgroups: true,
        });
        const xq = q8RoundTrip(xv);
        const want = new Float64Array(nRows); // (nRows) W·q8(x)
        const f32 = new Float64Array(nRows); // (nRows) W·x
        for (let r = 0; r < nRows; r++) {
          for (let j = 0; j < k; j++) {
            want[r] += values[r * k + j]! * xq[j]!;
            f32[r] += values[r * k + j]! * xv[j]!;
          }
        }
        expect(gpuErrors).toEqual([]);
        const exact = nmseOf(got, want);
        const vsF32 = nmseOf(got, f32);
        console.log(
          `[int8 dot] ${GgmlType[type]} k ${k}: nmse vs W·q8(x) ${exact.toExponential(2)}, vs W·x ${vsF32.toExponential(2)}`,
        );
        // Not bit-exact: a GPU's 1 / d and f16 rounding may flip an int8 of x at a rounding boundary (lavapipe:
        // 5e-8 … 7e-8 against 2e-5 … 4e-5 for the unquantised product).
        expect(exact).toBeLessThan(1e-6);
        expect(vsF32).toBeGreaterThan(10 * exact); // the activations were quantised: the Q8 path ran
        expect(vsF32).toBeLessThan(1e-3);
      });
    }
  }
});

// The whole model with the variant forced, f16 and f32 element paths (subgroups: gemv_sg), against llama.cpp.
for (const preferF16 of [true, false]) {
  let device: GPUDevice | null = null;
  const name = `webgpu ${preferF16 ? 'f16' : 'f32'}+subgroups hardware kernels, Q8 activations`;
  runConformanceSuite(
    name,
    async () => {
      device ??= await getTestDevice(['shader-f16', 'subgroups']);
      return createWebGpuOps({ device, preferF16, useSubgroups: true, kernels: 'hardware', int8Dot: true });
    },
    {
      // Q4_0 and Q8_0 throughout; gemma-q8_0 adds tied embeddings (the Q8_0 output matrix through gemv_sg)
      filter: (f) =>
        [
          'derived/stories260K-q4_0.gguf',
          'derived/stories260K-q8_0.gguf',
          'arch/qwen3-q8_0.gguf',
          'recorded/gemma-q8_0-s1.gguf',
          'recorded/olmo2-q8_0-s1.gguf',
        ].includes(f.id),
      tolerances: (base) => {
        const extra = preferF16 ? 2e-2 : 0;
        return { ...base, dequantF32: Math.max(base.dequantF32, 2e-2) + extra, kvF32: base.kvF32 + extra };
      },
      onReport: (fixture, report) => console.log(`[${name}] ${formatReport(fixture.id, report)}`),
    },
  );
}
