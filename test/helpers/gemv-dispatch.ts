/**
 * One hardware GEMV dispatched by hand on a test device (no backend around it): y[nRows] = W·x with W's rows packed
 * in `layout` (the bytes `repackRows` makes) — what the kernel tests of gemv_sg and gemv share. The weights are bound
 * with their exact byte range: a row-split layout's scales sit right-justified at the binding's end.
 */

import { BufferUsage } from '../../src/backend/webgpu/gpu-flags.js';
import { PipelineCache } from '../../src/backend/webgpu/pipelines.js';
import { PARAMS_BYTES, StepRecorder } from '../../src/backend/webgpu/step-recorder.js';
import { type GpuQuantLayout, rowWords } from '../../src/backend/webgpu/upload.js';

/** What `runGemv` dispatches. */
export interface GemvDispatch {
  readonly device: GPUDevice;
  readonly kernel: 'gemv_sg' | 'gemv';
  /** The weights' layout (row stride) and the WGSL snippet the kernel composes (its name and source). */
  readonly layout: GpuQuantLayout;
  readonly quant: { readonly name: string; readonly wgsl: string };
  /** W's rows as uploaded: (nRows, row stride) bytes. */
  readonly packed: Uint8Array;
  readonly k: number;
  readonly nRows: number;
  /** (k) f32 */
  readonly x: Float32Array;
  readonly wgSize: number;
  /** Rows per workgroup (the dispatch is ceil(nRows / rowsPerWorkgroup) workgroups). */
  readonly rowsPerWorkgroup: number;
  /** Override constants of the pipeline (ROWS, R, K, Q8_X …). */
  readonly constants: Readonly<Record<string, number | boolean>>;
  /** Compose with subgroup reductions (gemv_sg) or workgroup memory (gemv). */
  readonly subgroups: boolean;
  readonly tag?: string;
}

/** Runs `d` and returns y (nRows f32). */
export async function runGemv(d: GemvDispatch): Promise<Float32Array> {
  const { device, k, nRows } = d;
  const made: GPUBuffer[] = [];
  const mk = (data: ArrayBufferView | null, size: number, extra: number): GPUBuffer => {
    const b = device.createBuffer({
      size: Math.ceil(size / 16) * 16,
      usage: BufferUsage.STORAGE | BufferUsage.COPY_DST | extra,
    });
    if (data) device.queue.writeBuffer(b, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
    made.push(b);
    return b;
  };
  const w = mk(d.packed, d.packed.byteLength, 0);
  const x = mk(d.x, d.x.byteLength, 0);
  const out = mk(null, nRows * 4, BufferUsage.COPY_SRC);
  const dummy = mk(null, 16, 0);
  const [rw1, rw2] = [mk(null, 16, 0), mk(null, 16, 0)];
  const pipes = new PipelineCache(device, 'f32', d.subgroups, PARAMS_BYTES);
  const rec = new StepRecorder(device);
  try {
    const pipe = pipes.get({
      kernel: d.kernel,
      quant: d.quant,
      wgSize: d.wgSize,
      constants: d.constants,
      ...(d.tag ? { tag: d.tag } : {}),
    });
    // Params: k, rows, row stride (words), x stride, out stride, offsets and fusions off, norm eps 0, splits at nRows.
    const params = [k, nRows, rowWords(d.layout, k), k, nRows, 0, 0, 0, 0, nRows, nRows, 0, 0, 0, 0];
    rec.dispatch(
      pipe,
      [null, { buffer: w, offset: 0, size: d.packed.byteLength }, x, out, dummy, dummy, rw1, rw2],
      (p) => {
        for (const [i, v] of params.entries()) {
          if (i === 8) p.f(v);
          else p.u(v);
        }
      },
      [Math.ceil(nRows / d.rowsPerWorkgroup), 1, 1],
    );
    return new Float32Array(await rec.read(out, 0, nRows * 4));
  } finally {
    rec.destroy();
    for (const b of made) b.destroy();
  }
}
