/**
 * The hardware GEMV without subgroups (shaders/kernels/gemv.wgsl, what Firefox/Safari get on a GPU), driven directly
 * on lavapipe with workgroup-memory reductions: every split the host can pick (8, 16, 32 and 64 invocations per row
 * group: ROWS = 8R … R, one reduction pass or two), rows that do not fill the last workgroup, the row-split types'
 * own dot_chunk (R = 4) and the generic chunk (R = 1: K-quants, floats with a tail shorter than a chunk), against an
 * f64 product of the dequantized weights. The host's choice of split (gemv-shape.ts) is checked here too.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { gemvSgQuant, gemvSgRowsPerSubgroup } from '../../src/backend/webgpu/gemv-sg-quant.js';
import { GEMV_WG, gemvShape } from '../../src/backend/webgpu/gemv-shape.js';
import { getGpuQuantLayout, repackRows } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';
import { runGemv } from '../helpers/gemv-dispatch.js';
import { collectGpuErrors, destroyTestGpu, getTestDevice, makeWeight, nmseOf, randoms } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());
const gpuErrors = collectGpuErrors();

describe('gemv (no subgroups): host split', () => {
  it('long rows get more invocations per row group, few rows split K further, ROWS·TPG = R·64', () => {
    expect(gemvShape(151936, 896, 4)).toEqual({ rows: 32, threadsPerRowGroup: 8 }); // 0.5B output: many rows
    expect(gemvShape(4864, 896, 4)).toEqual({ rows: 8, threadsPerRowGroup: 32 }); // 0.5B gate·up: 608 workgroups
    expect(gemvShape(896, 4864, 4)).toEqual({ rows: 4, threadsPerRowGroup: 64 }); // 0.5B down
    expect(gemvShape(896, 896, 4)).toEqual({ rows: 8, threadsPerRowGroup: 32 }); // 0.5B wo: few rows
    expect(gemvShape(128256, 2048, 4)).toEqual({ rows: 8, threadsPerRowGroup: 32 }); // 1B output
    expect(gemvShape(100, 64, 1)).toEqual({ rows: 8, threadsPerRowGroup: 8 }); // two chunks: no wider split
    for (const [n, k, r] of [
      [1, 32, 1],
      [37, 301, 1],
      [151936, 896, 4],
      [2048, 8192, 4],
    ] as const) {
      const s = gemvShape(n, k, r);
      expect(s.rows * s.threadsPerRowGroup).toBe(r * GEMV_WG);
      expect([8, 16, 32, 64]).toContain(s.threadsPerRowGroup);
    }
  });
});

describe('gemv (no subgroups) on lavapipe', () => {
  // [type, layout, K, rows, invocations per row group to run]
  const cases: [GgmlType, 'hardware' | 'software', number, number, number[]][] = [
    [GgmlType.Q4_0, 'hardware', 1024, 37, [8, 16, 32, 64]],
    [GgmlType.Q8_0, 'hardware', 512, 37, [8, 64]],
    [GgmlType.Q5_0, 'hardware', 512, 37, [8, 64]],
    [GgmlType.IQ4_NL, 'hardware', 512, 37, [16]],
    [GgmlType.Q4_K, 'software', 512, 13, [8, 64]],
    [GgmlType.F16, 'software', 301, 13, [8, 32]],
  ];
  for (const [type, kernels, k, nRows, tpgs] of cases) {
    it(`${GgmlType[type]} (${kernels} layout), K ${k}, ${nRows} rows: ${tpgs.join(', ')} invocations per row group`, async () => {
      const device = await getTestDevice();
      const layout = getGpuQuantLayout(type, 'w', kernels);
      const r = gemvSgRowsPerSubgroup(layout);
      const { bytes, values } = makeWeight(type, k, nRows, 21 + type);
      const packed = repackRows(layout, bytes, k, { rowStart: 0, nRows });
      const xv = randoms(k, 6);
      const want = new Float64Array(nRows); // (nRows)
      for (let i = 0; i < nRows; i++) for (let j = 0; j < k; j++) want[i] += values[i * k + j]! * xv[j]!;
      for (const tpg of tpgs) {
        const rows = (GEMV_WG / tpg) * r;
        const got = await runGemv({
          device,
          kernel: 'gemv',
          layout,
          quant: { name: layout.name, wgsl: gemvSgQuant(layout).wgsl },
          packed,
          k,
          nRows,
          x: xv,
          wgSize: GEMV_WG,
          rowsPerWorkgroup: rows,
          constants: { ROWS: rows, R: r, K: k },
          subgroups: false,
          tag: `rows${rows}_k${k}`,
        });
        expect(gpuErrors).toEqual([]);
        expect(nmseOf(got, want), `${tpg} invocations per row group`).toBeLessThan(1e-9);
      }
    });
  }
});
