/**
 * WebGPU weight kernels vs the quant registry, for every type the backend runs, on the f16+subgroups and the
 * f32+shared-memory paths: embedding lookup (dequantization, ≈ exact vs QuantType.dequantizeRow), decode gemv
 * (n = 1: gemv_rows for K ≤ 256; above, gemv_sg with subgroups, else gemv, the GPUs' GEMV without subgroups) and
 * tiled gemm (n ≥ 2), judged by NMSE against an f64 product of the dequantized weights. Shapes are odd on purpose:
 * one block per row, a single row, row counts that are not multiples of 32, F32/F16 rows of 45 and 301 elements.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GPU_QUANT_LAYOUTS } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import {
  collectGpuErrors,
  destroyTestGpu,
  getTestGpu,
  GPU_VARIANTS,
  makeWeight,
  nmseOf as nmse,
  randoms,
} from '../helpers/gpu.js';

/** out[t, r] = Σ_k w[r, k]·x[t, k] in f64. */
function matmulRef(
  w: Float32Array,
  x: Float32Array,
  k: number,
  nRows: number,
  n: number,
  bias?: Float32Array,
): Float64Array {
  const out = new Float64Array(n * nRows); // (n, nRows)
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < nRows; r++) {
      let s = bias ? bias[r] : 0;
      for (let j = 0; j < k; j++) s += w[r * k + j] * x[t * k + j];
      out[t * nRows + r] = s;
    }
  }
  return out;
}

/** Writes `values` ([n, cols]) into `act` through an F32 embedding table (the only host→activation path of Ops). */
async function setRows(
  ops: Ops,
  act: ReturnType<Ops['createActivation']>,
  values: Float32Array,
  n: number,
): Promise<void> {
  const table = await ops.uploadWeight(
    { name: `rows${values.length}`, type: GgmlType.F32, shape: [act.cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
}

const TYPES = [...GPU_QUANT_LAYOUTS.keys()];
const created: WebGpuOps[] = [];
const gpuErrors = collectGpuErrors();
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

for (const variant of GPU_VARIANTS) {
  describe(`webgpu weights (${variant.name})`, () => {
    let ops: WebGpuOps;
    beforeAll(async () => {
      // isSoftware: false selects the GPU kernels (gemv_sg, or gemv without subgroups, for K > 256) on lavapipe too.
      ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
        isSoftware: false,
        int8Dot: false, // f32 activations: exact against the dequantized reference (Q8 ones: webgpu-int8-dot)
      });
      created.push(ops);
      console.log(`[gpu] ${ops.description}`);
    });

    for (const type of TYPES) {
      const qt = getQuantType(type);
      const isFloat = qt.blockElements === 1;
      // One block per row; several blocks (or an odd float row) with a row count that is not a multiple of 32; and
      // rows longer than 256, which decode through gemv / gemv_sg instead of gemv_rows.
      const longK = isFloat ? 301 : Math.ceil(257 / qt.blockElements) * qt.blockElements;
      const shapes: [number, number][] = isFloat
        ? [
            [45, 1],
            [64, 37],
            [longK, 3],
          ]
        : [
            [qt.blockElements, 1],
            [qt.blockElements * 3, 37],
            [longK, 3],
          ];
      it(`${qt.name}: embed, gemv and gemm match the dequantized reference`, async () => {
        for (const [k, nRows] of shapes) {
          const { bytes, values } = makeWeight(type, k, nRows, 7 + k + nRows + type);
          const w = await ops.uploadWeight({ name: `${qt.name}.${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
          // embed: rows 0, last, 0 again — dequantization must be exact up to f32 rounding of fused multiply-adds.
          const tokens = [0, nRows - 1, Math.floor(nRows / 2)];
          const e = ops.createActivation('e', 3, k);
          ops.beginStep({ tokens: Int32Array.from(tokens), startPos: 0, slot: 0 });
          ops.embed(e, w, 3);
          ops.endStep();
          const got = await ops.read(e, 3);
          for (let i = 0; i < 3; i++) {
            for (let j = 0; j < k; j++) {
              const want = values[tokens[i]! * k + j]!;
              expect(
                Math.abs(got[i * k + j]! - want),
                `${qt.name} embed row ${tokens[i]} col ${j}`,
              ).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want)));
            }
          }
          // gemv (n = 1) and gemm (n = 5 and n = 33: a partial second token tile).
          for (const n of [1, 5, 33]) {
            const xv = randoms(n * k, 99 + n);
            const x = ops.createActivation('x', n, k);
            const out = ops.createActivation('out', n, nRows);
            await setRows(ops, x, xv, n);
            ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
            ops.matmul(out, x, w, n);
            ops.endStep();
            const res = await ops.read(out, n);
            const ref = matmulRef(values, xv, k, nRows, n);
            // gemv accumulates f32 products of exact weights; gemm's f16 path stages x and w tiles in f16 (≈ 1e-7).
            const limit = n > 1 && variant.preferF16 && ops.description.includes('f16') ? 3e-6 : 1e-9;
            expect(nmse(res, ref), `${qt.name} [${k}×${nRows}] n=${n}`).toBeLessThan(limit);
          }
        }
      });
    }

    // 1000-byte bindings. Software set: Q4_0 rows of 64 are one 80-byte group (2 blocks + padding), so 37 rows
    // become parts of 12, 12, 12 + 1. Hardware set (row-split): 36 bytes a row, parts of 27 + 10 rows, each part's
    // scales at the end of its own binding.
    for (const isSoftware of [undefined, false]) {
      it(`weights split across bindings: embed, gemv and gemm see every part${isSoftware === false ? ' (hardware set)' : ''}`, async () => {
        const split = await createWebGpuOps({
          gpu: await getTestGpu(),
          preferF16: variant.preferF16,
          useSubgroups: variant.useSubgroups,
          maxBindingBytes: 1000,
          int8Dot: false,
          ...(isSoftware === false ? { isSoftware } : {}),
        });
        created.push(split);
        const k = 64;
        const nRows = 37;
        const { bytes, values } = makeWeight(GgmlType.Q4_0, k, nRows, 77);
        const w = await split.uploadWeight({ name: 'split', type: GgmlType.Q4_0, shape: [k, nRows] }, bytes);
        const e = split.createActivation('e', 2, k);
        split.beginStep({ tokens: Int32Array.of(3, 30), startPos: 0, slot: 0 });
        split.embed(e, w, 2);
        split.endStep();
        const rows = await split.read(e, 2);
        expect(Array.from(rows)).toEqual([...values.subarray(3 * k, 4 * k), ...values.subarray(30 * k, 31 * k)]);
        for (const n of [1, 4]) {
          const xv = randoms(n * k, 5 + n);
          const x = split.createActivation('x', n, k);
          const out = split.createActivation('out', n, nRows);
          await setRows(split, x, xv, n);
          split.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
          split.matmul(out, x, w, n);
          split.endStep();
          expect(nmse(await split.read(out, n), matmulRef(values, xv, k, nRows, n))).toBeLessThan(3e-6);
        }
      });
    }

    it('matmul adds a bias (gemv and gemm)', async () => {
      const k = 64;
      const nRows = 19;
      const { bytes, values } = makeWeight(GgmlType.Q8_0, k, nRows, 5);
      const w = await ops.uploadWeight({ name: 'bias.w', type: GgmlType.Q8_0, shape: [k, nRows] }, bytes);
      const bv = randoms(nRows, 6);
      const b = await ops.uploadWeight(
        { name: 'bias.b', type: GgmlType.F32, shape: [nRows] },
        new Uint8Array(bv.buffer),
      );
      for (const n of [1, 3]) {
        const xv = randoms(n * k, 8);
        const x = ops.createActivation('x', n, k);
        const out = ops.createActivation('out', n, nRows);
        await setRows(ops, x, xv, n);
        ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
        ops.matmul(out, x, w, n, b);
        ops.endStep();
        expect(nmse(await ops.read(out, n), matmulRef(values, xv, k, nRows, n, bv))).toBeLessThan(3e-6);
      }
    });
  });
}

describe('webgpu validation', () => {
  it('raised no uncaptured WebGPU errors', () => {
    expect(gpuErrors).toEqual([]);
  });
});
