/**
 * The WebGPU backend's mixture-of-experts ops, each recorded into the step's single submission (no readback):
 * routing (`moe_route.wgsl`: probabilities, top-k, weights; expert ids stay in a GPU buffer), the gather matmul
 * over the selected experts (`gemv_id.wgsl`, ggml's mul_mat_id: one dispatch per part of a 3-D stack, parts split at
 * expert boundaries at upload; a workgroup whose (token, slot) routes elsewhere reads nothing; software adapters run
 * one lane per row instead of a workgroup per row, without the reduction's barriers, and K-quant / Q4_0 / Q8_0 rows
 * through the types' 32-element block products with x broadcast per subgroup as gemv_bcast does: gemv_id_dot.wgsl),
 * and the weighted sum /
 * sigmoid-gated add (`moe_combine.wgsl`). Used by WebGpuOps through a narrow host interface.
 */

import { LlmError } from '../../errors.js';
import type { Activation, Weight } from '../ops.js';
import type { MoeRouteParams } from '../moe-step.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import { BCAST_BLOCK, canFuseGlu, withFastDot32 } from './gemv-bcast.js';
import { grid, type StepRecorder } from './step-recorder.js';
import type { GpuQuantLayout } from './upload.js';

/** Workgroup sizes (powers of two ≤ 256). */
const WG_ROW = 64; // one workgroup per (expert row, slot); software adapters: 64 rows of a slot per workgroup
const WG_FLAT = 256; // elementwise / per token
/** Most workgroups along one dispatch dimension (WebGPU's default limit). */
const MAX_GROUPS = 65535;

/** What the MoE ops need of the backend. */
export interface MoeOpsHost {
  /**
   * Software adapters take gemv_id's lane-per-row entry (`main_rows`), or with subgroups gemv_id_dot for types with
   * a fast dot32 (`bcastDirectLoads`: its per-lane x path, as gemv_bcast's).
   */
  readonly ctx: { readonly isSoftware: boolean; readonly isSubgroups: boolean; readonly bcastDirectLoads: boolean };
  readonly rec: StepRecorder;
  /** (4) f32 zeros for unused read bindings. */
  readonly dummy: GPUBuffer;
  pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline;
}

/** See the file header. */
export class MoeOps {
  constructor(private readonly h: MoeOpsHost) {}

  route(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void {
    const nUsed = ids.cols;
    if (weights.cols !== nUsed || nUsed > logits.cols) {
      throw new LlmError(
        'invalid-request',
        `moeRoute: ${nUsed} experts per token (weights ${weights.cols} columns) of ${logits.cols} experts`,
      );
    }
    const pipe = this.h.pipe({
      kernel: 'moe_route',
      wgSize: WG_FLAT,
      constants: {
        IS_SIGMOID: params.gating === 'sigmoid',
        IS_SOFTMAX_WEIGHT: params.gating === 'softmax-weight',
        NORM_WEIGHTS: params.normWeights,
        HAS_BIAS: params.selectionBias !== null,
        HAS_SCALE: !!params.expertScale,
      },
      tag: `${params.gating}${params.normWeights ? '.norm' : ''}${params.selectionBias ? '.bias' : ''}${params.expertScale ? '.scale' : ''}`,
    });
    const bias = params.selectionBias ? (params.selectionBias as GpuWeight).vector : null;
    const scale = params.expertScale ? (params.expertScale as GpuWeight).vector : null;
    this.h.rec.dispatch(
      pipe,
      [null, buf(logits), buf(ids), buf(weights), bias ?? this.h.dummy, scale ?? this.h.dummy],
      (p) => p.u(n).u(logits.cols).u(nUsed).f(params.scale),
      grid(Math.ceil(n / WG_FLAT)),
    );
  }

  matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void {
    const wt = w as GpuWeight;
    const rows = wt.nRows / nExperts;
    const nUsed = ids.cols;
    if (x.cols !== wt.rowLength || out.cols !== rows || n * nUsed > out.maxRows || !Number.isInteger(rows)) {
      throw new LlmError(
        'invalid-request',
        `matmulExperts ${wt.name}: x [${n}, ${x.cols}] · ${nExperts} experts of [${rows}, ${wt.rowLength}] does not fit out ${out.label} [${out.maxRows}, ${out.cols}]`,
      );
    }
    const ctx = this.h.ctx;
    const laneRows = ctx.isSoftware; // one lane per (row, slot), or one workgroup
    // Software adapters with subgroups: whole 32-element blocks through the type's fast dot32 (gemv_id_dot).
    const blocks = laneRows && ctx.isSubgroups && canFuseGlu(wt.layout) && wt.rowLength % BCAST_BLOCK === 0;
    const direct = blocks && ctx.bcastDirectLoads;
    const tag = xPerSlot ? (direct ? 'slot_direct' : 'slot') : direct ? 'direct' : undefined;
    const pipe = this.h.pipe({
      kernel: blocks ? 'gemv_id_dot' : 'gemv_id',
      ...(laneRows && !blocks ? { entry: 'main_rows' } : {}),
      quant: blocks ? withFastDot32(wt.layout) : wt.layout,
      wgSize: WG_ROW,
      constants: { X_PER_SLOT: xPerSlot, ...(blocks ? { FORCE_DIRECT: ctx.bcastDirectLoads } : {}) },
      tag,
    });
    const [gx, gy] = grid(laneRows ? Math.ceil(rows / WG_ROW) : rows);
    const total = n * nUsed;
    for (const part of wt.parts) {
      const eFirst = part.rowStart / rows; // parts hold whole experts (weight-upload.ts)
      const eEnd = eFirst + part.nRows / rows;
      for (let z0 = 0; z0 < total; z0 += MAX_GROUPS) {
        const nz = Math.min(MAX_GROUPS, total - z0);
        this.h.rec.dispatch(
          pipe,
          blocks // gemv_id_dot binds the part twice (u32 and vec4 views)
            ? [null, part.buffer, buf(x), buf(out), buf(ids), part.buffer]
            : [null, part.buffer, buf(x), buf(out), buf(ids)],
          (p) => p.u(wt.rowLength).u(rows).u(wt.rowStride).u(x.cols).u(out.cols).u(nUsed).u(eFirst).u(eEnd).u(z0),
          [gx, gy, nz],
        );
      }
    }
  }

  combine(out: Activation, y: Activation, weights: Activation, n: number): void {
    this.elementwise('main', out, y, weights, n, weights.cols);
  }

  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void {
    this.elementwise('main_gated', out, y, gate, n, 1);
  }

  /** out[t·nUsed + k] += bias row ids[t, k] (`moe_combine.wgsl` main_bias; the bias is an f32 vector). */
  addExpertBias(out: Activation, bias: Weight, ids: Activation, n: number): void {
    const b = (bias as GpuWeight).vector;
    const rows = n * ids.cols;
    if (b === null || rows > out.maxRows || (bias.rowLength * bias.nRows) % out.cols !== 0) {
      throw new LlmError('invalid-request', `addExpertBias ${bias.name}: not a vector of whole ${out.cols}-wide rows`);
    }
    const count = rows * out.cols;
    const pipe = this.h.pipe({ kernel: 'moe_combine', entry: 'main_bias', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, b, buf(ids), buf(out)],
      (p) => p.u(count).u(out.cols).u(ids.cols).u(ids.cols),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  /** gpt-oss's clamped SwiGLU (`glu.wgsl` main_oai); out must be neither gate nor up. */
  swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void {
    const count = n * out.cols;
    if (buf(out) === buf(gate) || buf(out) === buf(up)) {
      throw new LlmError('invalid-request', 'swigluOai: out must be neither gate nor up');
    }
    const pipe = this.h.pipe({ kernel: 'glu', entry: 'main_oai', wgSize: WG_FLAT, tag: 'oai' });
    this.h.rec.dispatch(
      pipe,
      [null, buf(gate), buf(up), buf(out)],
      (p) => p.u(count),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  private elementwise(entry: string, out: Activation, y: Activation, w: Activation, n: number, nUsed: number): void {
    if (y.cols !== out.cols) {
      throw new LlmError('invalid-request', `moe_combine: y has ${y.cols} columns, out ${out.cols}`);
    }
    const count = n * out.cols;
    const pipe = this.h.pipe({ kernel: 'moe_combine', entry, wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, buf(y), buf(w), buf(out)],
      (p) => p.u(count).u(out.cols).u(nUsed).u(w.cols),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }
}

function buf(a: Activation): GPUBuffer {
  return (a as GpuActivation).buffer;
}

/** Parts of a 3-D stack of `nExperts` experts: whole experts per part, each part within `maxBindingBytes`. */
export function expertParts(
  name: string,
  nExperts: number,
  expertBytes: number,
  rowsPerExpert: number,
  maxBindingBytes: number,
): { rowStart: number; nRows: number }[] {
  const perPart = Math.floor(maxBindingBytes / expertBytes);
  if (perPart < 1) {
    throw new LlmError(
      'out-of-memory',
      `uploading ${name}: one expert is ${expertBytes} bytes, over the device's storage binding limit of ${maxBindingBytes} bytes`,
      { details: { tensor: name, expertBytes, maxStorageBufferBindingSize: maxBindingBytes } },
    );
  }
  const parts: { rowStart: number; nRows: number }[] = [];
  for (let e = 0; e < nExperts; e += perPart) {
    parts.push({ rowStart: e * rowsPerExpert, nRows: Math.min(perPart, nExperts - e) * rowsPerExpert });
  }
  return parts;
}
