/**
 * The Mamba-2 token mixer over plain f32 arrays (`Ops.mamba2`), as llama.cpp's `build_mamba2_layer` with ggml's
 * `ssm_conv` and `ssm_scan`: causal depthwise conv1d (+ bias, SiLU) over the x | B | C channels, the selective scan
 * per head with B and C of the head's group, the D skip, then y · SiLU(z) RMS-normalised per group. Tokens run one
 * after another (the recurrent form; a chunked prefill scan is still to come), so decode and prefill share one path.
 */

import type { HostView } from './delta-net.js';
import type { Activation, Weight } from './ops.js';

/**
 * Geometry of a Mamba-2 layer (`ssm.conv_kernel`, `ssm.state_size`, `ssm.group_count`, `ssm.time_step_rank`,
 * `ssm.inner_size` = nHeads · headDim).
 */
export interface Mamba2Dims {
  /** Taps of the conv1d (d_conv). */
  readonly convWidth: number;
  /** SSM state size per channel (d_state, the width of B and C per group). */
  readonly dState: number;
  /** Groups of B and C (n_group); head h reads group h / (nHeads / nGroups). */
  readonly nGroups: number;
  /** SSM heads (dt rank); each has one dt, A and D. */
  readonly nHeads: number;
  /** Channels per head (d_inner / nHeads). */
  readonly headDim: number;
}

/** The per-step input of a Mamba-2 layer and the conv scratch. */
export interface Mamba2Inputs {
  /** [n, 2·dInner + 2·nGroups·dState + nHeads] ssm_in projection: z | x | B | C | dt. */
  readonly zxbcdt: Activation;
  /** Scratch of the conv1d output ([n, dInner + 2·nGroups·dState]); backends that need none ignore it. */
  readonly conv: Activation;
}

/** The small weights of a Mamba-2 layer (its in/out projections are matmuls of the forward pass). */
export interface Mamba2Weights {
  readonly dims: Mamba2Dims;
  readonly conv: Weight; // [dInner + 2·nGroups·dState rows, convWidth]
  readonly convBias: Weight | null; // [dInner + 2·nGroups·dState]
  readonly dtBias: Weight; // [nHeads]
  readonly a: Weight; // [nHeads] −exp(A_log)
  readonly d: Weight; // [nHeads] skip
  /** [dInner] grouped RMSNorm weight (ggml [dInner / nGroups, nGroups]); null: y · SiLU(z) is not normalised. */
  readonly norm: Weight | null;
}

/** Channels of a Mamba-2 layer: its inner width, its conv1d channels (x | B | C) and its ssm_in rows (z | xBC | dt). */
export function mamba2Widths(d: Mamba2Dims): { inner: number; conv: number; proj: number } {
  const inner = d.nHeads * d.headDim;
  const conv = inner + 2 * d.nGroups * d.dState;
  return { inner, conv, proj: inner + conv + d.nHeads };
}

/** f32 values of one layer's state per sequence: the conv window [(taps − 1), conv], then [nHeads, headDim, dState]. */
export function mamba2StateSize(d: Mamba2Dims): number {
  const { inner, conv } = mamba2Widths(d);
  return (d.convWidth - 1) * conv + inner * d.dState;
}

/** Scratch reused by every call (single-threaded, never re-entered): grows once, decode allocates nothing. */
let scratch = new Float32Array(256);

const silu = (x: number): number => x / (1 + Math.exp(-x));
/** ggml_compute_softplus_f32. */
const softplus = (x: number): number => (x > 20 ? x : Math.log(1 + Math.exp(x)));

/** `Ops.mamba2` on a host backend whose values `view` locates (cpu, wasm); `state` is this layer's in this slot. */
export function hostMamba2(
  view: HostView,
  out: Activation,
  x: Mamba2Inputs,
  n: number,
  w: Mamba2Weights,
  eps: number,
  state: Float32Array,
  fresh: boolean,
): void {
  const d = w.dims;
  const { inner, conv: C, proj } = mamba2Widths(d);
  const [o, oAt] = view(out);
  const [zx, zxAt] = view(x.zxbcdt);
  const [kernel, kAt] = view(w.conv);
  const bias = w.convBias ? view(w.convBias) : null;
  const [dtBias, dtAt] = view(w.dtBias);
  const [aw, aAt] = view(w.a);
  const [dw, dAt] = view(w.d);
  const normView = w.norm ? view(w.norm) : null;
  const taps = d.convWidth;
  const win = taps - 1; // conv state rows
  const sAt = win * C; // ssm states start here: [nHeads, headDim, dState]
  const ds = d.dState;
  const headsPerGroup = d.nHeads / d.nGroups;
  const groupCols = inner / d.nGroups;
  if (fresh) state.fill(0);
  if (scratch.length < C) scratch = new Float32Array(C);
  const cv = scratch; // [C] this token's conv output: x | B | C
  if (proj > x.zxbcdt.cols) throw new Error('mamba2: zxbcdt is narrower than the layer');
  for (let t = 0; t < n; t++) {
    const row = zxAt + t * x.zxbcdt.cols; // z at row, xBC at row + inner, dt at row + inner + C
    // Causal depthwise conv over [state rows ‖ this token] (oldest tap first, as ggml_ssm_conv), bias, SiLU.
    for (let c = 0; c < C; c++) {
      const kr = kAt + c * taps;
      let sum = 0;
      for (let k = 0; k < win; k++) sum = Math.fround(sum + Math.fround(kernel[kr + k] * state[k * C + c]));
      const v = zx[row + inner + c];
      sum = Math.fround(sum + Math.fround(kernel[kr + win] * v));
      if (bias) sum = Math.fround(sum + bias[0][bias[1] + c]);
      cv[c] = Math.fround(silu(sum));
      for (let k = 0; k + 1 < win; k++) state[k * C + c] = state[(k + 1) * C + c];
      if (win > 0) state[(win - 1) * C + c] = v;
    }
    const outRow = oAt + t * out.cols;
    // Selective scan per head: state = state·dA + B·(x·dt); y = state·C + D·x; then y · silu(z).
    for (let h = 0; h < d.nHeads; h++) {
      const dt = softplus(Math.fround(zx[row + inner + C + h] + dtBias[dtAt + h]));
      const dA = Math.fround(Math.exp(Math.fround(dt * aw[aAt + h])));
      const g = Math.floor(h / headsPerGroup);
      const bAt = inner + g * ds;
      const cAt = inner + d.nGroups * ds + g * ds;
      for (let i = 0; i < d.headDim; i++) {
        const ii = h * d.headDim + i;
        const xv = cv[ii];
        const xdt = Math.fround(xv * dt);
        const s = sAt + ii * ds;
        let sum = 0;
        for (let j = 0; j < ds; j++) {
          const v = Math.fround(Math.fround(state[s + j] * dA) + Math.fround(cv[bAt + j] * xdt));
          state[s + j] = v;
          sum += v * cv[cAt + j];
        }
        const y = Math.fround(Math.fround(sum) + Math.fround(xv * dw[dAt + h]));
        o[outRow + ii] = Math.fround(silu(zx[row + ii]) * y);
      }
    }
    // RMSNorm of each group of dInner / nGroups columns, times ssm_norm (when the layer has one).
    if (!normView) continue;
    const [norm, normAt] = normView;
    for (let g = 0; g < d.nGroups; g++) {
      const at = outRow + g * groupCols;
      let ss = 0;
      for (let i = 0; i < groupCols; i++) ss += o[at + i] * o[at + i];
      const inv = 1 / Math.sqrt(ss / groupCols + eps);
      for (let i = 0; i < groupCols; i++) o[at + i] = Math.fround(o[at + i] * inv * norm[normAt + g * groupCols + i]);
    }
  }
}
