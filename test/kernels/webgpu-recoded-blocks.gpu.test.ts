/**
 * Q6_K and Q5_K on the software kernel set, whose upload re-codes each block into byte quants
 * (shaders/quant/q6_k_i8.wgsl, q5_k_i8.wgsl):
 * every kernel that reads those weights — embedding lookup (≈ exact vs the registry's dequantization), gemv_bcast
 * with its fast dot32 (with subgroups: n = 1, 3 and a 33-token prompt chunk, which it takes up to 512 tokens), and
 * over load4 gemv_rows (no subgroups, n ≤ 8) and the tiled gemm (n = 513; n = 33 without subgroups) — against an f64
 * product of the dequantized weights, on the f16+subgroups and f32 paths, for rows of one and of three blocks; the
 * kernel that ran is checked through the step profile. The gemv_bcast
 * fusions (norm, accumulate, gate·up) are in webgpu-fused.gpu.test.ts, the expert matmul in webgpu-experts.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuWeight } from '../../src/backend/webgpu/gpu-resources.js';
import { createWebGpuOps, type WebGpuOps } from '../../src/backend/webgpu/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import {
  collectGpuErrors,
  destroyTestGpu,
  getTestGpu,
  GPU_VARIANTS,
  makeWeight,
  nmseOf as nmse,
  randoms,
} from '../helpers/gpu.js';

const created: WebGpuOps[] = [];
const gpuErrors = collectGpuErrors();
afterAll(() => {
  for (const o of created) o.destroy();
  destroyTestGpu();
});

for (const variant of GPU_VARIANTS) {
  describe(`webgpu re-coded K-quant blocks (${variant.name}, software)`, () => {
    let ops: WebGpuOps;
    beforeAll(async () => {
      ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
        isSoftware: true,
      });
      created.push(ops);
    });

    for (const [type, layoutName] of [
      [GgmlType.Q6_K, 'q6_k_i8'],
      [GgmlType.Q5_K, 'q5_k_i8'],
    ] as const)
      it(`${GgmlType[type]}: embed, gemv and gemm match the dequantized reference`, async () => {
        for (const [k, nRows] of [
          [256, 1],
          [768, 37],
        ] as const) {
          const { bytes, values } = makeWeight(type, k, nRows, 5 + k + nRows);
          const w = await ops.uploadWeight({ name: `${layoutName}.${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
          expect((w as GpuWeight).layout.name).toBe(layoutName);
          const tokens = [0, nRows - 1, Math.floor(nRows / 2)];
          const e = ops.createActivation('e', 3, k);
          ops.beginStep({ tokens: Int32Array.from(tokens), startPos: 0, slot: 0 });
          ops.embed(e, w, 3);
          ops.endStep();
          const got = await ops.read(e, 3);
          for (let i = 0; i < 3; i++) {
            for (let j = 0; j < k; j++) {
              const want = values[tokens[i]! * k + j]!;
              expect(Math.abs(got[i * k + j]! - want), `embed row ${tokens[i]} col ${j}`).toBeLessThanOrEqual(
                1e-6 * Math.max(1, Math.abs(want)),
              );
            }
          }
          for (const n of [1, 3, 33, 513]) {
            // x through an F32 table (the only host→activation path of Ops)
            const xv = randoms(n * k, 40 + n);
            const table = await ops.uploadWeight(
              { name: `x${n}.${k}`, type: GgmlType.F32, shape: [k, n] },
              new Uint8Array(xv.buffer.slice(0)),
            );
            const x = ops.createActivation('x', n, k);
            const out = ops.createActivation('out', n, nRows);
            ops.beginProfile();
            ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
            ops.embed(x, table, n);
            ops.matmul(out, x, w, n);
            ops.endStep();
            const res = await ops.read(out, n);
            const kernels = Object.keys(ops.endProfile(1, n).kernels);
            const want = variant.useSubgroups ? (n <= 512 ? 'gemv_bcast' : 'gemm') : n <= 8 ? 'gemv_rows' : 'gemm';
            expect(
              kernels.some((name) => name.startsWith(`${want}.`)),
              `n=${n}: ${want} in ${kernels.join(', ')}`,
            ).toBe(true);
            const ref = new Float64Array(n * nRows); // (n, nRows)
            for (let t = 0; t < n; t++)
              for (let r = 0; r < nRows; r++)
                for (let j = 0; j < k; j++) ref[t * nRows + r] += values[r * k + j]! * xv[t * k + j]!;
            const limit = n > 1 && ops.description.includes('f16') ? 3e-6 : 1e-9;
            expect(nmse(res, ref), `[${k}×${nRows}] n=${n}`).toBeLessThan(limit);
          }
        }
        expect(gpuErrors).toEqual([]);
      });
  });
}
