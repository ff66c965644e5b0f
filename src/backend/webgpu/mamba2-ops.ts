/**
 * The Mamba-2 token mixer on WebGPU, inside the step's submission: the `mamba2` kernel's four dispatches per layer
 * (conv1d + SiLU over all the step's tokens, conv-state update, selective scan per state row, grouped gated norm) over
 * the recurrent state buffer; and nemotron_h's relu² (`relu_sqr`), the other op its hybrids add.
 */

import { mamba2StateSize, mamba2Widths } from '../mamba2.js';
import type { Mamba2Dims, Mamba2Inputs, Mamba2Weights } from '../mamba2.js';
import type { Weight } from '../ops.js';
import type { GpuActivation } from './gpu-resources.js';
import type { RecurrentStateHost, RecurrentStateOps, RecurrentStep, SequenceChunk } from './recurrent-state-ops.js';
import { sequenceChunks, writeSequences } from './recurrent-state-ops.js';
import { grid, type ParamsWriter } from './step-recorder.js';

const WG = 64;

/**
 * Whether a per-head prefill kernel (delta_net rule_heads, mamba2 scan_heads) fits a head of `rows` state rows of
 * `width` values: one invocation per row (a power-of-two workgroup of 8 … 256), the row in a 128-value register array.
 */
export function rowsPerWorkgroup(rows: number, width: number): boolean {
  return width <= 128 && rows >= 8 && rows <= 256 && (rows & (rows - 1)) === 0;
}

/** The f32 buffers of a Mamba-2 layer's small weights. */
interface Mamba2GpuWeights {
  readonly dims: Mamba2Dims;
  readonly conv: GPUBuffer; // [channels, taps]
  readonly convBias: GPUBuffer | null; // [channels]
  readonly dtBias: GPUBuffer; // [nHeads]
  readonly a: GPUBuffer; // [nHeads]
  readonly d: GPUBuffer; // [nHeads]
  readonly norm: GPUBuffer | null; // [inner]
}

/** See the file header. */
export class Mamba2Ops {
  /** The small vectors of each layer's weights as the kernel binds them, resolved once per layer. */
  private readonly vectors = new WeakMap<Mamba2Weights, Mamba2GpuWeights>();

  constructor(
    private readonly h: RecurrentStateHost,
    private readonly recurrent: RecurrentStateOps,
    private readonly vec: (w: Weight) => GPUBuffer,
  ) {}

  /** Records `Ops.mamba2` for `layer` of the step's slot. */
  record(
    step: RecurrentStep,
    out: GpuActivation,
    x: Mamba2Inputs,
    layer: number,
    n: number,
    weights: Mamba2Weights,
    eps: number,
  ): void {
    let w = this.vectors.get(weights);
    if (!w) {
      const v = this.vec;
      const m = weights;
      w = {
        dims: m.dims,
        conv: v(m.conv),
        convBias: m.convBias && v(m.convBias),
        dtBias: v(m.dtBias),
        a: v(m.a),
        d: v(m.d),
        norm: m.norm && v(m.norm),
      };
      this.vectors.set(weights, w);
    }
    recordMamba2(this.h, this.recurrent, step, out, x, layer, n, w, eps);
  }

  /** Records `Ops.reluSquared` (the step is only checked to be open). */
  reluSquared(_step: unknown, x: GpuActivation, n: number): void {
    const count = n * x.cols;
    const pipe = this.h.pipe({ kernel: 'relu_sqr', wgSize: WG });
    this.h.rec.dispatch(pipe, [null, x.buffer], (p) => p.u(count), grid(Math.ceil(count / WG)));
  }
}

/**
 * Records the four dispatches of `Ops.mamba2` for `layer` of the step's slot; in a step of several sequences the conv,
 * its state update and the scan take each row on its own slot's state (`sequenceChunks`), the grouped norm is row-wise.
 */
function recordMamba2(
  h: RecurrentStateHost,
  recurrent: RecurrentStateOps,
  step: RecurrentStep,
  out: GpuActivation,
  x: Mamba2Inputs,
  layer: number,
  n: number,
  w: Mamba2GpuWeights,
  eps: number,
): void {
  const d = w.dims;
  const widths = mamba2Widths(d);
  const size = mamba2StateSize(d);
  const { state } = recurrent.locate('mamba2', step.slot, layer, size);
  const chunks = sequenceChunks(step, n, (slot) => recurrent.locate('mamba2', slot, layer, size).at);
  const [zx, conv] = [x.zxbcdt, x.conv] as GpuActivation[];
  const paramsOf =
    (c: SequenceChunk) =>
    (p: ParamsWriter): void => {
      p.u(c.rows)
        .u(widths.conv)
        .u(d.convWidth)
        .u(zx.cols)
        .u(c.at)
        .u(c.fresh ? 1 : 0)
        .u(widths.inner)
        .u(d.dState);
      p.u(d.nGroups)
        .u(d.nHeads)
        .u(d.headDim)
        .u(out.cols)
        .u(conv.cols)
        .u(w.convBias ? 1 : 0)
        .f(eps)
        .u(c.row0);
      writeSequences(p, c);
    };
  const pipe = (entry: string) => h.pipe({ kernel: 'mamba2', entry, wgSize: WG });
  const groups = (count: number) => grid(Math.ceil(count / WG));
  const bias = w.convBias ?? w.conv; // bound but unread without a bias
  for (const c of chunks) {
    const params = paramsOf(c);
    const own = c.seqs === 0 ? 1 : c.rows; // the update's and the scan's sequences
    const convIn = [null, zx.buffer, state, w.conv, conv.buffer, bias];
    h.rec.dispatch(pipe('main'), convIn, params, groups(c.rows * widths.conv));
    h.rec.dispatch(pipe('update'), [null, zx.buffer, state], params, groups(own * widths.conv));
    const scan = [null, zx.buffer, state, null, conv.buffer, null, w.dtBias, w.a, w.d, out.buffer];
    if (c.seqs === 0 && c.rows > 1 && rowsPerWorkgroup(d.headDim, d.dState)) {
      // Prefill: one workgroup per head, state rows in registers, B/C tiles shared (mamba2.wgsl scan_heads).
      const heads = h.pipe({ kernel: 'mamba2', entry: 'scan_heads', wgSize: d.headDim });
      h.rec.dispatch(heads, scan, params, grid(d.nHeads));
    } else {
      h.rec.dispatch(pipe('scan'), scan, params, groups(own * widths.inner));
    }
  }
  if (!w.norm) return; // no ssm_norm: out is y · silu(z) as the scan wrote it
  const norm = [null, null, null, null, null, null, null, null, null, out.buffer, w.norm];
  const all = paramsOf({ row0: 0, rows: n, seqs: 0, at: 0, fresh: false, ats: [], freshMask: 0 }); // row-wise
  h.rec.dispatch(pipe('gated_norm'), norm, all, grid(n * d.nGroups)); // one workgroup per (t, group)
}
