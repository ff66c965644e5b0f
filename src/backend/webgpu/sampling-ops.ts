/**
 * Sampling reads on the GPU: argmax and top-k of one logits row (topk_radix: a radix select of the k-th largest,
 * one dispatch), their results copied into one small buffer and read back. Used by WebGpuOps through a narrow host
 * interface.
 */

import { BufferUsage } from './gpu-flags.js';
import { LlmError } from '../../errors.js';
import type { TopK } from '../ops.js';
import type { GpuActivation } from './gpu-resources.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import type { StepRecorder } from './step-recorder.js';

/** Workgroup size of the argmax / top-k scans. */
const WG_FLAT = 256;
/** Largest k of topK (topk_radix's MAX_K). */
const MAX_TOP_K = 256;

/** What the sampling reads need of the backend. */
export interface SamplingHost {
  readonly rec: StepRecorder;
  pipe(spec: Omit<PipelineSpec, 'quant'>): CachedPipeline;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** Destroys a buffer once the work recorded so far is submitted. */
  release(b: GPUBuffer): void;
}

/** See the file header. */
export class SamplingOps {
  private readonly result: GPUBuffer; // (2·MAX_TOP_K) u32 argmax / topK results

  constructor(private readonly h: SamplingHost) {
    this.result = h.buffer('result', MAX_TOP_K * 8, BufferUsage.COPY_SRC);
  }

  /**
   * Index of the largest value of row `row` of x. With `into` (the token input) the kernel writes the index there
   * (as the next step's token 0; its word 1 gets the value bits) and it is read back from there.
   */
  async argmax(xa: GpuActivation, row: number, into?: GPUBuffer): Promise<number> {
    const pipe = this.h.pipe({ kernel: 'argmax', wgSize: WG_FLAT });
    const out = into ?? this.result;
    this.h.rec.dispatch(pipe, [null, xa.buffer, out], (p) => p.u(row * xa.cols).u(xa.cols), [1, 1, 1]);
    return new Uint32Array(await this.h.rec.read(out, 0, 8))[0]!;
  }

  /** The k largest values of row `row` of x and their indices. */
  async topK(xa: GpuActivation, row: number, k: number): Promise<TopK> {
    if (!Number.isInteger(k) || k < 1 || k > Math.min(MAX_TOP_K, xa.cols)) {
      throw new LlmError(
        'invalid-request',
        `topK: k = ${k} must be an integer in 1 … ${Math.min(MAX_TOP_K, xa.cols)}`,
        { details: { k } },
      );
    }
    const pipe = this.h.pipe({ kernel: 'topk_radix', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, xa.buffer, this.result],
      (p) =>
        p
          .u(row * xa.cols)
          .u(xa.cols)
          .u(k),
      [1, 1, 1],
    );
    const bytes = await this.h.rec.read(this.result, 0, 8 * k);
    return { ids: new Int32Array(bytes, 0, k).slice(), logits: new Float32Array(bytes, 4 * k, k).slice() };
  }
}
