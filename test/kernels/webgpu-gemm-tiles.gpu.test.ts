/**
 * The plain prefill gemm's tiles (matmul-ops.ts GEMM_TILES, issue 23): products large enough for the 64 × 64 tile
 * (256 invocations) run it, smaller ones keep 32 × 32, and both match an f64 product of the dequantized weights on
 * the f16+subgroups and f32+shared paths, with partial row, token and k tiles. The shared-memory banks of both tiles
 * are modelled in webgpu-gemm-banks.test.ts.
 */

import { afterAll, describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
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

async function setRows(ops: Ops, act: ReturnType<Ops['createActivation']>, values: Float32Array, n: number) {
  const table = await ops.uploadWeight(
    { name: `rows${values.length}`, type: GgmlType.F32, shape: [act.cols, n] },
    new Uint8Array(values.buffer.slice(0)),
  );
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(act, table, n);
  ops.endStep();
}

for (const variant of GPU_VARIANTS) {
  describe(`gemm tiles (${variant.name})`, () => {
    it('64 × 64 where the product has ≥ 128 such tiles, else 32 × 32; both match the reference', async () => {
      const ops = await createWebGpuOps({
        gpu: await getTestGpu(),
        preferF16: variant.preferF16,
        useSubgroups: variant.useSubgroups,
        isSoftware: false,
      });
      created.push(ops);
      const cases: [GgmlType, number, number, number, string][] = [
        [GgmlType.Q4_0, 64, 2011, 260, 't64x64'], // 32 × 5 tiles of 64: partial rows and tokens
        [GgmlType.F32, 45, 2011, 260, 't64x64'], // a partial k step
        [GgmlType.Q4_0, 64, 200, 70, 't32x32'], // 4 × 2 large tiles only: the 32 × 32 tile
      ];
      for (const [type, k, nRows, n, tag] of cases) {
        const { bytes, values } = makeWeight(type, k, nRows, 3 + k + nRows);
        const w = await ops.uploadWeight({ name: `w${type}.${k}x${nRows}`, type, shape: [k, nRows] }, bytes);
        const xv = randoms(n * k, 17 + n);
        const x = ops.createActivation('x', n, k);
        const out = ops.createActivation('out', n, nRows);
        await setRows(ops, x, xv, n);
        ops.beginProfile();
        ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
        ops.matmul(out, x, w, n);
        ops.endStep();
        const res = await ops.read(out, n);
        const kernels = Object.keys(ops.endProfile(1, n).kernels);
        const ref = new Float64Array(n * nRows);
        for (let t = 0; t < n; t++) {
          for (let r = 0; r < nRows; r++) {
            let s = 0;
            for (let j = 0; j < k; j++) s += values[r * k + j]! * xv[t * k + j]!;
            ref[t * nRows + r] = s;
          }
        }
        const label = `type ${type} [${k}×${nRows}] n=${n}`;
        expect(
          kernels.some((l) => l.startsWith(`gemm.${tag}.`)),
          `${label}: ${kernels.join(', ')}`,
        ).toBe(true);
        expect(nmse(res, ref), label).toBeLessThan(3e-6);
      }
      expect(gpuErrors).toEqual([]);
    }, 600_000);
  });
}
