/**
 * qwen35's layers on WebGPU, inside the step's submission: the gated DeltaNet (`delta_net` kernel: conv, conv-state
 * update, q/k L2 norm, delta rule, gated norm — five dispatches per layer) over the recurrent state buffer, and
 * gated attention's head split and sigmoid gate (`gated_attn`).
 */

import { deltaNetStateSize } from '../delta-net.js';
import type { Weight } from '../ops.js';
import type { DeltaNetDims, DeltaNetInputs, DeltaNetWeights } from '../delta-net-types.js';
import type { GpuActivation } from './gpu-resources.js';
import type { RecurrentStateHost, RecurrentStateOps, RecurrentStep, SequenceChunk } from './recurrent-state-ops.js';
import { sequenceChunks, writeSequences } from './recurrent-state-ops.js';
import { grid, type ParamsWriter } from './step-recorder.js';
import { rowsPerWorkgroup } from './mamba2-ops.js';

const WG = 64;

/** The f32 buffers of a DeltaNet layer's small weights. */
interface DeltaNetGpuWeights {
  readonly dims: DeltaNetDims;
  readonly conv: GPUBuffer; // [convDim, taps]
  readonly dtBias: GPUBuffer; // [nVHeads]
  readonly a: GPUBuffer; // [nVHeads]
  readonly norm: GPUBuffer; // [headV]
}

/** See the file header. */
export class DeltaNetOps {
  /** The small vectors of each layer's weights as the kernels bind them, resolved once (not per token). */
  private readonly vectors = new WeakMap<DeltaNetWeights, DeltaNetGpuWeights>();

  constructor(
    private readonly h: RecurrentStateHost,
    private readonly recurrent: RecurrentStateOps,
  ) {}

  /**
   * Records `Ops.deltaNet` for `layer` of the step's slot; in a step of several sequences the conv, its state update
   * and the delta rule take each row on its own slot's state (`sequenceChunks`), the L2 and gated norms are row-wise.
   */
  deltaNet(
    step: RecurrentStep,
    out: GpuActivation,
    x: DeltaNetInputs,
    layer: number,
    n: number,
    weights: DeltaNetWeights,
    eps: number,
  ): void {
    const w = this.gpuWeights(weights);
    const d = w.dims;
    const size = deltaNetStateSize(d);
    const { state } = this.recurrent.locate('deltaNet', step.slot, layer, size);
    const chunks = sequenceChunks(step, n, (slot) => this.recurrent.locate('deltaNet', slot, layer, size).at);
    const channels = 2 * d.nKHeads * d.headK + d.nVHeads * d.headV;
    const [mixed, conv, beta, alpha, z] = [x.mixed, x.conv, x.beta, x.alpha, x.z] as GpuActivation[];
    const paramsOf =
      (c: SequenceChunk) =>
      (p: ParamsWriter): void => {
        p.u(c.rows)
          .u(channels)
          .u(d.convWidth)
          .u(mixed.cols)
          .u(c.at)
          .u(c.fresh ? 1 : 0)
          .u(d.headK)
          .u(d.nKHeads);
        p.u(d.headV).u(d.nVHeads).u(out.cols).u(z.cols).u(beta.cols).u(alpha.cols).u(conv.cols).f(eps).u(c.row0);
        writeSequences(p, c);
      };
    const pipe = (entry: string) => this.h.pipe({ kernel: 'delta_net', entry, wgSize: WG });
    const rec = this.h.rec;
    const groups = (count: number) => grid(Math.ceil(count / WG));
    for (const c of chunks) {
      const params = paramsOf(c);
      const own = c.seqs === 0 ? 1 : c.rows; // the update's and the rule's sequences
      rec.dispatch(pipe('main'), [null, mixed.buffer, state, w.conv, conv.buffer], params, groups(c.rows * channels));
      rec.dispatch(pipe('update'), [null, mixed.buffer, state], params, groups(own * channels));
    }
    const all = paramsOf({ row0: 0, rows: n, seqs: 0, at: 0, fresh: false, ats: [], freshMask: 0 }); // row-wise
    rec.dispatch(pipe('l2norm'), [null, null, null, null, conv.buffer], all, groups(n * 2 * d.nKHeads));
    const rule = [null, null, state, null, conv.buffer, beta.buffer, alpha.buffer, w.dtBias, w.a, out.buffer];
    for (const c of chunks) {
      if (c.seqs === 0 && c.rows > 1 && rowsPerWorkgroup(d.headV, d.headK)) {
        // Prefill: one workgroup per value head, state rows in registers, k/q tiles shared (delta_net.wgsl rule_heads).
        const heads = this.h.pipe({ kernel: 'delta_net', entry: 'rule_heads', wgSize: d.headV });
        rec.dispatch(heads, rule, paramsOf(c), grid(d.nVHeads));
      } else {
        const own = c.seqs === 0 ? 1 : c.rows;
        rec.dispatch(pipe('rule'), rule, paramsOf(c), groups(own * d.nVHeads * d.headV));
      }
    }
    const norm = [null, null, null, null, null, null, null, null, null, out.buffer, z.buffer, w.norm];
    rec.dispatch(pipe('gated_norm'), norm, all, groups(n * d.nVHeads));
  }

  private gpuWeights(w: DeltaNetWeights): DeltaNetGpuWeights {
    let g = this.vectors.get(w);
    if (!g) {
      const vec = (v: Weight): GPUBuffer => this.h.vec(v);
      g = { dims: w.dims, conv: vec(w.conv), dtBias: vec(w.dtBias), a: vec(w.a), norm: vec(w.norm) };
      this.vectors.set(w, g);
    }
    return g;
  }

  /** Records `Ops.splitHeadPairs`. */
  splitHeadPairs(q: GpuActivation, gate: GpuActivation, qg: GpuActivation, n: number, headDim: number): void {
    const pipe = this.h.pipe({ kernel: 'gated_attn', wgSize: WG });
    const params = (p: ParamsWriter): void => {
      p.u(n).u(q.cols).u(headDim).u(qg.cols);
    };
    this.h.rec.dispatch(pipe, [null, qg.buffer, q.buffer, gate.buffer], params, grid(Math.ceil((n * q.cols) / WG)));
  }

  /** Records `Ops.mulSigmoid`. */
  mulSigmoid(x: GpuActivation, gate: GpuActivation, n: number): void {
    const pipe = this.h.pipe({ kernel: 'gated_attn', entry: 'mul_sigmoid', wgSize: WG });
    const params = (p: ParamsWriter): void => {
      p.u(n).u(x.cols).u(0).u(0);
    };
    this.h.rec.dispatch(pipe, [null, null, x.buffer, gate.buffer], params, grid(Math.ceil((n * x.cols) / WG)));
  }
}
