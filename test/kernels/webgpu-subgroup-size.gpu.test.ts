/**
 * The subgroup-wider-than-workgroup shape (issue 23): some mobile GPUs run 128-wide subgroups, wider than a 64-lane
 * workgroup, so a subgroup then holds fewer live lanes than `subgroup_size` says. A GEMV striding K by
 * `subgroup_size` skips the part of K that the missing lanes would have covered. Lavapipe (8-wide subgroups) with a
 * workgroup of 4 lanes reproduces that shape; each hardware GEMV must still produce the full dot product there.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { PipelineCache } from '../../src/backend/webgpu/pipelines.js';
import { PARAMS_BYTES, StepRecorder } from '../../src/backend/webgpu/step-recorder.js';
import { GEMV_SG_ROWS } from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvSgQuant, gemvSgRowsPerSubgroup } from '../../src/backend/webgpu/gemv-sg-quant.js';
import { getGpuQuantLayout, repackRows, rowWords } from '../../src/backend/webgpu/upload.js';
import { BufferUsage } from '../../src/backend/webgpu/gpu-flags.js';
import { GgmlType } from '../../src/gguf/types.js';
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
        const mk = (data: ArrayBufferView | null, size: number, extra: number): GPUBuffer => {
          const b = device.createBuffer({
            size: Math.ceil(size / 16) * 16,
            usage: BufferUsage.STORAGE | BufferUsage.COPY_DST | extra,
          });
          if (data) device.queue.writeBuffer(b, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
          return b;
        };
        const w = mk(packed, packed.byteLength, 0);
        const x = mk(xv, xv.byteLength, 0);
        const out = mk(null, nRows * 4, BufferUsage.COPY_SRC);
        const dummy = mk(null, 16, 0);
        const [rw1, rw2] = [mk(null, 16, 0), mk(null, 16, 0)];
        const pipes = new PipelineCache(device, 'f32', true, PARAMS_BYTES);
        const rec = new StepRecorder(device);
        const pipe = pipes.get({
          kernel: 'gemv_sg',
          quant: { name: layout.name, wgsl: gemvSgQuant(layout).wgsl },
          wgSize,
          constants: { ROWS: GEMV_SG_ROWS, R: gemvSgRowsPerSubgroup(layout) },
        });
        const rowsPerGroup = GEMV_SG_ROWS;
        rec.dispatch(
          pipe,
          // the weights' exact range: a row-split layout's scales sit at the binding's end (the buffer is rounded up)
          [null, { buffer: w, offset: 0, size: packed.byteLength }, x, out, dummy, dummy, rw1, rw2],
          (p) =>
            p
              .u(k)
              .u(nRows)
              .u(rowWords(layout, k))
              .u(k)
              .u(nRows)
              .u(0)
              .u(0)
              .u(0)
              .f(0)
              .u(nRows)
              .u(nRows)
              .u(0)
              .u(0)
              .u(0)
              .u(0),
          [Math.ceil(nRows / rowsPerGroup), 1, 1],
        );
        const got = new Float32Array(await rec.read(out, 0, nRows * 4));
        const want = new Float64Array(nRows); // (nRows)
        for (let r = 0; r < nRows; r++) for (let j = 0; j < k; j++) want[r] += values[r * k + j]! * xv[j]!;
        rec.destroy();
        expect(gpuErrors).toEqual([]);
        expect(nmseOf(got, want)).toBeLessThan(1e-8);
      });
    }
  }
});
