/**
 * The software-adapter decode GEMV: gemv_bcast (subgroups, K a multiple of 32, a few tokens) for plain, fused
 * (RMSNorm, bias, residual accumulate) and gate·up·GLU matvecs, where CPU implementations of WebGPU run it faster
 * than the GPU kernels. Used by WebGpuOps through a narrow host interface.
 */

import { LlmError } from '../../errors.js';
import type { FusedNorm, GluActivation, Weight } from '../ops.js';
import type { GpuContext } from './device.js';
import { BCAST_BLOCK, bcastQuantSource, canFuseGlu } from './gemv-bcast.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { PipelineCache } from './pipelines.js';
import { grid, type StepRecorder } from './step-recorder.js';

/** Largest gemv_bcast workgroup (two rows per invocation); ≥ 4 × 8 so the quarter size still holds a subgroup of 8. */
const BCAST_WG = 64;
/** Largest batch that software adapters run through the decode kernels instead of the tiled gemm. */
export const SOFTWARE_GEMV_MAX_N = 8;
/**
 * Largest batch through gemv_bcast (one token per workgroup z, so weights are decoded once per token): on lavapipe
 * prompts of 32, 128 and 512 tokens still run 1.8–2.9× faster through it than through the tiled gemm (Qwen2.5-0.5B
 * Q4_0, Qwen3.5-0.8B Q4_K_M; BENCHMARKS.md, branch q6k-gpu), so prompt chunks up to the largest measured take it.
 */
const BCAST_MAX_N = 512;

/** What the software GEMV needs of the backend. */
export interface SoftwareGemvHost {
  readonly ctx: GpuContext;
  readonly rec: StepRecorder;
  /** The pipeline cache itself: gemv_bcast does not settle the hardware GEMV's pending Q|K|V (there is none). */
  readonly pipes: PipelineCache;
  /** (4) f32 zeros for unused read bindings. */
  readonly dummy: GPUBuffer;
  /** The f32 buffer of a 1-D weight. */
  vec(w: Weight): GPUBuffer;
  profileMatmul(
    kernel: string,
    ws: readonly GpuWeight[],
    nRows: number,
    n: number,
    groups: readonly number[],
    wgSize: number,
    reads: number,
  ): void;
}

/** See the file header. */
export class SoftwareGemv {
  constructor(private readonly h: SoftwareGemvHost) {}

  /**
   * Records out (+)= norm(x)·Wᵀ (+ bias) — or act(norm(x)·Wᵀ)·(norm(x)·upᵀ) with `glu` — through gemv_bcast, the
   * software-adapter decode kernel (subgroups, K a multiple of 32, n ≤ BCAST_MAX_N). Returns false, having
   * recorded nothing, where it does not apply (GPUs keep their kernels).
   */
  bcast(
    o: GpuActivation,
    xa: GpuActivation,
    wt: GpuWeight,
    n: number,
    bias: Weight | null,
    norm: FusedNorm | null,
    accumulate: boolean,
    glu: { up: GpuWeight; act: GluActivation } | null,
  ): boolean {
    const ctx = this.h.ctx;
    const k = wt.rowLength;
    if (
      !ctx.isSoftware ||
      !ctx.isSubgroups ||
      n > BCAST_MAX_N ||
      wt.vector ||
      k % BCAST_BLOCK !== 0 ||
      xa.cols % 4 !== 0
    )
      return false;
    const nw = norm ? (norm.weight as GpuWeight) : null;
    if (nw && (nw.rowLength !== k || xa.cols !== k)) return false;
    const isGelu = glu?.act === 'gelu';
    const direct = ctx.bcastDirectLoads;
    const tag =
      [norm ? 'norm' : '', accumulate ? 'acc' : '', glu ? `glu_${glu.act}` : '', direct ? 'direct' : '']
        .filter((t) => t)
        .join('_') || undefined;
    // Smaller workgroups for short matrices, so that even K/V projections (128 rows) spread over the CPU's threads.
    const wgSize = wt.nRows >= 2048 ? BCAST_WG : wt.nRows >= 256 ? BCAST_WG / 2 : BCAST_WG / 4;
    const pipe = this.h.pipes.get({
      kernel: 'gemv_bcast',
      quant: bcastQuantSource(wt.layout, glu !== null),
      wgSize,
      constants: {
        HAS_NORM: norm !== null,
        ACCUMULATE: accumulate,
        IS_GLU: glu !== null,
        IS_GELU: isGelu,
        FORCE_DIRECT: direct,
      },
      tag,
    });
    const vec = (v: Weight | null): GPUBuffer => (v ? this.h.vec(v) : this.h.dummy);
    const eps = norm?.eps ?? 0;
    for (const part of wt.parts) {
      const upBuffer = glu ? glu.up.parts[0]!.buffer : this.h.dummy;
      this.h.rec.dispatch(
        pipe,
        [null, part.buffer, xa.buffer, o.buffer, vec(bias), vec(nw), upBuffer, part.buffer, upBuffer], // weights, up: u32 and vec4 views
        (p) =>
          p
            .u(k)
            .u(part.nRows)
            .u(wt.rowStride)
            .u(xa.cols)
            .u(o.cols)
            .u(part.rowStart)
            .u(bias ? 1 : 0)
            .f(eps),
        grid(Math.ceil(part.nRows / (2 * wgSize)), n), // two rows per invocation
      );
      this.h.profileMatmul(
        pipe.label,
        glu ? [wt, glu.up] : [wt],
        part.nRows,
        n,
        grid(Math.ceil(part.nRows / (2 * wgSize)), n),
        wgSize,
        n,
      );
    }
    return true;
  }

  /**
   * out = act(norm(x)·gateᵀ)·(norm(x)·upᵀ) on software adapters, gate and up of one shape; false where gemv_bcast
   * does not take it (split weights, a quant type it cannot fuse, out = x, too many tokens).
   */
  glu(
    o: GpuActivation,
    xa: GpuActivation,
    g: GpuWeight,
    u: GpuWeight,
    n: number,
    act: GluActivation,
    norm: FusedNorm | null,
  ): boolean {
    if (g.parts.length !== 1 || u.parts.length !== 1 || !canFuseGlu(g.layout) || o.buffer === xa.buffer) return false;
    if (xa.cols < g.rowLength || o.cols < g.nRows) {
      throw new LlmError(
        'invalid-request',
        `matmulGlu ${g.name}: x has ${xa.cols} columns for rows of ${g.rowLength}, out ${o.cols} columns for ${g.nRows} rows`,
      );
    }
    return this.bcast(o, xa, g, n, null, norm, false, { up: u, act });
  }
}
