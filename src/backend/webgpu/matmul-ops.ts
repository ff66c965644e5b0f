/**
 * Matrix products on WebGPU: for each x[n, k] · Wᵀ the kernel that fits the adapter and the shape — gemv_bcast on
 * software adapters, the hardware GEMV (with its fused norm / bias / accumulate and Q|K|V, gate|up groups) on GPUs,
 * gemv_rows for short rows, the tiled gemm for prefill — one dispatch per weight part.
 */

import { LlmError } from '../../errors.js';
import type { Activation, FusedNorm, GluActivation, Weight } from '../ops.js';
import type { GpuContext } from './device.js';
import { GEMV_SG_ROWS } from './gemv-sg-params.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { HardwareGemv } from './hardware-gemv.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import { SOFTWARE_GEMV_MAX_N, type SoftwareGemv } from './software-gemv.js';
import { grid, type StepRecorder } from './step-recorder.js';
import { type SubgroupMatrixTile, subgroupMatrixTile } from './subgroup-matrix.js';
import type { GpuQuantLayout } from './upload.js';

const GEMV_ROWS_MAX_K = 256;
/** Rows per workgroup of each decode kernel. */
const GEMV_ROWS_PER_GROUP = { gemv: 1, gemv_rows: 64, gemv_sg: GEMV_SG_ROWS } as const;

/** A tile of the plain gemm: workgroup size and its GX / TT overrides (BR = 4·GX rows, BT = wgSize / GX · TT tokens). */
export interface GemmTile {
  readonly wgSize: number;
  readonly gx: number;
  readonly tt: number;
}

/**
 * The plain gemm's tiles: 32 × 32 (64 invocations), and 64 × 64 (256 invocations: half the weight and activation
 * re-reads per output) where the product still has GEMM_LARGE_MIN_GROUPS workgroups of it to fill a GPU.
 */
export const GEMM_TILES: readonly GemmTile[] = [
  { wgSize: 64, gx: 8, tt: 4 },
  { wgSize: 256, gx: 16, tt: 4 },
];
const GEMM_LARGE_MIN_GROUPS = 128;

/** What the matrix products need of the backend. */
export interface MatmulOpsHost {
  readonly ctx: GpuContext;
  readonly rec: StepRecorder;
  /** (4) f32 zeros for unused read bindings. */
  readonly dummy: GPUBuffer;
  pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline;
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
export class MatmulOps {
  private readonly tiles = new Map<string, SubgroupMatrixTile | null>(); // gemm_sm tile per weight layout name

  constructor(
    private readonly h: MatmulOpsHost,
    private readonly hw: HardwareGemv,
    private readonly sw: SoftwareGemv,
  ) {}

  matmul(out: Activation, x: Activation, w: Weight, n: number, bias: Weight | null): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const wt = w as GpuWeight;
    if (xa.cols < wt.rowLength || o.cols < wt.nRows || o.buffer === xa.buffer) {
      throw new LlmError(
        'invalid-request',
        `matmul ${wt.name}: x has ${xa.cols} columns for rows of ${wt.rowLength}, out ${o.cols} columns for ${wt.nRows} rows (out must not be x)`,
      );
    }
    if (this.sw.bcast(o, xa, wt, n, bias, null, false, null)) return; // software adapters: gemv_bcast
    // Decode: one row per invocation for short rows (no idle lanes, no barriers); longer rows one subgroup per
    // row when subgroups exist, else a row per SIMD lane on software adapters and gemv's row groups (gemv-shape.ts) on GPUs. Prefill: the tiled
    // gemm — except small batches on software adapters, which the decode kernels run faster per token.
    const kind = this.gemvKind(wt.rowLength, n);
    if (kind === 'gemv_sg' || kind === 'gemv') {
      this.hw.gemv(o, xa, wt, n, (bias as GpuWeight | null | undefined) ?? null, null, false);
      return;
    }
    const sm = kind === 'gemm' ? this.matrixTile(wt) : null;
    const large = GEMM_TILES[1]!;
    const big = kind === 'gemm' && Math.ceil(wt.nRows / (4 * large.gx)) * Math.ceil(n / 64) >= GEMM_LARGE_MIN_GROUPS;
    const tile = big ? large : GEMM_TILES[0]!;
    const pipe = sm
      ? this.h.pipe({ kernel: 'gemm_sm', quant: wt.layout, wgSize: sm.wgSize, tag: sm.tag, extra: sm.extra })
      : kind === 'gemm'
        ? this.h.pipe({
            kernel: 'gemm',
            quant: wt.layout,
            wgSize: tile.wgSize,
            constants: { GX: tile.gx, TT: tile.tt },
            tag: `t${4 * tile.gx}x${(tile.wgSize / tile.gx) * tile.tt}`,
          })
        : this.h.pipe({ kernel: kind, quant: wt.layout, wgSize: 64 });
    const [tileRows, tileTokens] = sm ? [sm.rows, sm.tokens] : [4 * tile.gx, (tile.wgSize / tile.gx) * tile.tt];
    const b = bias ? ((bias as GpuWeight).vector ?? (bias as GpuWeight).parts[0]!.buffer) : this.h.dummy;
    for (const part of wt.parts) {
      const groups: [number, number, number] =
        kind === 'gemm'
          ? [Math.ceil(part.nRows / tileRows), Math.ceil(n / tileTokens), 1]
          : grid(Math.ceil(part.nRows / GEMV_ROWS_PER_GROUP[kind]), n);
      this.h.rec.dispatch(
        pipe,
        [null, part.buffer, xa.buffer, o.buffer, b],
        (p) =>
          p
            .u(wt.rowLength)
            .u(part.nRows)
            .u(wt.rowStride)
            .u(xa.cols)
            .u(o.cols)
            .u(part.rowStart)
            .u(bias ? 1 : 0)
            .u(0)
            .u(n),
        groups,
      );
      const reads = kind === 'gemm' ? Math.ceil(n / tileTokens) : n;
      this.h.profileMatmul(
        pipe.label,
        [wt],
        part.nRows,
        n,
        groups,
        sm?.wgSize ?? (kind === 'gemm' ? tile.wgSize : 64),
        reads,
      );
    }
  }

  /**
   * out (+)= norm(x)·Wᵀ + bias in one fused kernel (gemv_bcast on software adapters, the hardware GEMV with its Q|K|V
   * group on GPUs); false, having recorded nothing, where neither applies. Positional: the compound steps call it
   * per projection and token, and allocate nothing.
   */
  fused(
    out: Activation,
    x: Activation,
    w: Weight,
    n: number,
    bias: Weight | null,
    norm: FusedNorm | null,
    accumulate: boolean,
  ): boolean {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const wt = w as GpuWeight;
    if (xa.cols < wt.rowLength || o.cols < wt.nRows || o.buffer === xa.buffer) {
      throw new LlmError(
        'invalid-request',
        `matmulFused ${wt.name}: x has ${xa.cols} columns for rows of ${wt.rowLength}, out ${o.cols} columns for ${wt.nRows} rows (out must not be x)`,
      );
    }
    if (this.sw.bcast(o, xa, wt, n, bias, norm, accumulate, null)) return true;
    return this.hw.fused(o, xa, wt, n, bias as GpuWeight | null, norm, accumulate);
  }

  glu(
    out: Activation,
    x: Activation,
    gate: Weight,
    up: Weight,
    n: number,
    act: GluActivation,
    norm: FusedNorm | null,
  ): boolean {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const g = gate as GpuWeight;
    const u = up as GpuWeight;
    const sameShape =
      g.type === u.type && g.rowLength === u.rowLength && g.nRows === u.nRows && g.rowStride === u.rowStride;
    if (!this.h.ctx.isSoftware) return sameShape && o.buffer !== xa.buffer && this.hw.glu(o, xa, g, u, n, act, norm);
    return sameShape && this.sw.glu(o, xa, g, u, n, act, norm);
  }

  /** gemm_sm's tile for these weights where the device has subgroup matrices (cached per layout), else null. */
  private matrixTile(wt: GpuWeight): SubgroupMatrixTile | null {
    const support = this.h.ctx.subgroupMatrix;
    if (!support) return null;
    const name = wt.layout.name;
    let tile = this.tiles.get(name);
    if (tile === undefined) {
      tile = subgroupMatrixTile(support, name, this.h.ctx.isF16, this.h.ctx.device.limits);
      this.tiles.set(name, tile);
    }
    return tile;
  }

  /** Which matrix kernel runs x[n, k] · Wᵀ (see matmul). */
  private gemvKind(k: number, n: number): 'gemm' | 'gemv' | 'gemv_rows' | 'gemv_sg' {
    if (n > 1 && !(this.h.ctx.isSoftware && n <= SOFTWARE_GEMV_MAX_N)) return 'gemm';
    if (k <= GEMV_ROWS_MAX_K) return 'gemv_rows';
    if (this.h.ctx.isSubgroups) return 'gemv_sg';
    return this.h.ctx.isSoftware ? 'gemv_rows' : 'gemv';
  }
}
