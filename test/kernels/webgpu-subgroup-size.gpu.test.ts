/**
 * The subgroup-wider-than-workgroup shape (issue 23): some mobile GPUs run 128-wide subgroups, wider than a 64-lane
 * workgroup, so a subgroup then holds fewer live lanes than `subgroup_size` says. A GEMV striding K by
 * `subgroup_size` skips the part of K that the missing lanes would have covered. Lavapipe (8-wide subgroups) with a
 * workgroup of 4 lanes reproduces that shape; each hardware GEMV must still produce the full dot product there.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { GEMV_SG_ROWS } from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvSgQuant, gemvSgRowsPerSubgroup } from '../../src/backend/webgpu/gemv-sg-quant.js';
import { getGpuQuantLayout, repackRows } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';
import { runGemv } from '../helpers/gemv-dispatch.js';
import { collectGpuErrors, destroyTestGpu, getTestDevice, makeWeight, nmseOf, randoms } from '../helpers/gpu.js';

afterAll(() => destroyTestGpu());
const gpuErrors = collectGpuErrors();

describe('hardware GEMV with a subgroup wider than the workgroup', () => {
  // [type, layout, workgroup sizes]: the row-split snippets' own dot_chunk and the generic one (load4 × 8).
  const cases: [GgmlType, 'hardware' | 'software', number[]][] = [
    [GgmlType.Q4_0, 'hardware', [4, 64, 256]],
    [GgmlType.Q8_0, 'hardware', [4, 64]],
    [GgmlType.Q5_0, 'hardware', [4, 64]],
    [GgmlType.IQ4_NL, 'hardware', [4, 64]],
    [GgmlType.Q4_0, 'software', [4]],
    [GgmlType.Q4_K, 'software', [4]],
    [GgmlType.F16, 'software', [64]],
  ];
  // Workgroups of 4 lanes (narrower than lavapipe's 8-wide subgroups: the bug's shape), of 64 (8 subgroups of 8:
  // split-K, 4 subgroups per row group, partial sums combined in workgroup memory) and of 256 (the host's choice for
  // few long rows, gemvSgWorkgroupSize: 16 subgroups per row group, here over K = 4096).
  for (const [type, kernels, wgSizes] of cases) {
    for (const wgSize of wgSizes) {
      it(`gemv_sg ${GgmlType[type]} (${kernels} layout), workgroup of ${wgSize} lanes on 8-wide subgroups covers all of K`, async () => {
        const device = await getTestDevice(['subgroups']);
        expect(device.features.has('subgroups')).toBe(true);
        // 480 (row-split): 15 blocks a row, 555 in all — an odd count, so the scale region starts with a padding half
        const k = wgSize === 256 ? 4096 : wgSize === 4 && kernels === 'hardware' ? 480 : 512;
        const nRows = 37;
        const layout = getGpuQuantLayout(type, 'w', kernels);
        const { bytes, values } = makeWeight(type, k, nRows, 11 + type);
        const packed = repackRows(layout, bytes, k, { rowStart: 0, nRows });
        const xv = randoms(k, 5);
        const got = await runGemv({
          device,
          kernel: 'gemv_sg',
          layout,
          quant: { name: layout.name, wgsl: gemvSgQuant(layout).wgsl },
          packed,
          k,
          nRows,
          x: xv,
          wgSize,
          rowsPerWorkgroup: GEMV_SG_ROWS,
          constants: { ROWS: GEMV_SG_ROWS, R: gemvSgRowsPerSubgroup(layout) },
          subgroups: true,
        });
        const want = new Float64Array(nRows); // (nRows)
        for (let r = 0; r < nRows; r++) for (let j = 0; j < k; j++) want[r] += values[r * k + j]! * xv[j]!;
        expect(gpuErrors).toEqual([]);
        expect(nmseOf(got, want)).toBeLessThan(1e-8);
      });
    }
  }
});
