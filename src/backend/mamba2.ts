/**
 * The Mamba-2 token mixer over plain f32 arrays (`Ops.mamba2`), as llama.cpp's `build_mamba2_layer` with ggml's
 * `ssm_conv` and `ssm_scan`: causal depthwise conv1d (+ bias, SiLU) over the x | B | C channels, the selective scan
 * per head with B and C of the head's group, the D skip, then y · SiLU(z) RMS-normalised per group. The conv1d runs
 * over all rows of the step, then the scan head by head over every token (recurrent-scan.ts; per-token numerics, as
 * llama.cpp's CPU ssm_scan), so decode and prefill share one path.
 */

import type { HostView } from './delta-net.js';
import type { Activation, Weight } from './ops.js';
import { type F32Ref, type RecurrentKernels, softplus, tsMamba2Scan } from './recurrent-scan.js';

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

/** The per-step input of a Mamba-2 layer (read once: host backends put softplus(dt + dt_bias) in place), conv scratch. */
export interface Mamba2Inputs {
  /** [n, 2·dInner + 2·nGroups·dState + nHeads] ssm_in projection: z | x | B | C | dt. */
  readonly zxbcdt: Activation;
  /** Scratch of the conv1d output ([n, dInner + 2·nGroups·dState]). */
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

const silu = (x: number): number => x / (1 + Math.exp(-x));

/**
 * `Ops.mamba2` on a host backend whose values `view` locates (cpu, wasm); `state` is this layer's in this slot. The
 * conv1d runs over all n rows into the conv scratch, dt through its bias and softplus in place, the scan head by head
 * over every token (`kernels`' native one when given, else recurrent-scan.ts's), then the grouped RMSNorm. Overwrites
 * x.conv and the dt columns of x.zxbcdt.
 */
export function hostMamba2(
  view: HostView,
  out: Activation,
  x: Mamba2Inputs,
  n: number,
  w: Mamba2Weights,
  eps: number,
  state: Float32Array,
  fresh: boolean,
  kernels: RecurrentKernels | null,
): void {
  const d = w.dims;
  const { inner, conv: C, proj } = mamba2Widths(d);
  if (proj > x.zxbcdt.cols) throw new Error('mamba2: zxbcdt is narrower than the layer');
  if (fresh) state.fill(0);
  const zx = view(x.zxbcdt);
  const conv = view(x.conv);
  const [xbc, kernel, bias] = [[zx[0], zx[1] + inner] as const, view(w.conv), w.convBias ? view(w.convBias) : null];
  if (kernels) {
    const args = { state: [state, 0] as const, x: xbc, xStride: x.zxbcdt.cols, kernel, bias, out: conv };
    kernels.convSilu({ ...args, outStride: x.conv.cols, n, channels: C, taps: d.convWidth });
  } else {
    convRows(C, d.convWidth, conv, x.conv.cols, xbc, x.zxbcdt.cols, kernel, bias, state, n);
  }
  const [dtb, dtb0] = view(w.dtBias);
  for (let t = 0; t < n; t++) {
    const at = zx[1] + t * x.zxbcdt.cols + inner + C; // dt ← softplus(dt + dt_bias), in place
    for (let h = 0; h < d.nHeads; h++) zx[0][at + h] = softplus(Math.fround(zx[0][at + h] + dtb[dtb0 + h]));
  }
  const scan = {
    state: [state, (d.convWidth - 1) * C] as const,
    conv,
    convStride: x.conv.cols,
    zx,
    zxStride: x.zxbcdt.cols,
    dtCol: inner + C,
    a: view(w.a),
    d: view(w.d),
    out: view(out),
    outStride: out.cols,
    n,
    ...d,
  };
  if (kernels) kernels.mamba2Scan(scan);
  else tsMamba2Scan(scan);
  if (w.norm) groupNormRows(d, scan.out, out.cols, view(w.norm), n, eps);
}

/**
 * conv[t] = silu(conv1d([state ‖ xBC])[t] + bias) for n rows (oldest tap first, as ggml_ssm_conv, f32 sums); the
 * window then holds the last taps − 1 rows of [state ‖ xBC].
 */
function convRows(
  C: number,
  taps: number,
  conv: F32Ref,
  convStride: number,
  xbc: F32Ref,
  xbcStride: number,
  kernel: F32Ref,
  bias: F32Ref | null,
  state: Float32Array,
  n: number,
): void {
  const win = taps - 1; // conv state rows
  const [[cv, cv0], [xs, xs0], [kw, kw0]] = [conv, xbc, kernel];
  for (let t = 0; t < n; t++) {
    for (let c = 0; c < C; c++) {
      const kr = kw0 + c * taps;
      let sum = 0;
      for (let k = 0; k < taps; k++) {
        const src = t + k; // row of [state ‖ xBC]
        const v = src < win ? state[src * C + c] : xs[xs0 + (src - win) * xbcStride + c];
        sum = Math.fround(sum + Math.fround(kw[kr + k] * v));
      }
      if (bias) sum = Math.fround(sum + bias[0][bias[1] + c]);
      cv[cv0 + t * convStride + c] = silu(sum);
    }
  }
  // The window slides n rows: row r becomes row n + r of [state ‖ xBC] (ascending: n + r ≥ r is still unread).
  for (let r = 0; r < win; r++) {
    const src = n + r;
    if (src < win) state.copyWithin(r * C, src * C, src * C + C);
    else for (let c = 0; c < C; c++) state[r * C + c] = xs[xs0 + (src - win) * xbcStride + c];
  }
}

/** RMSNorm of each group of dInner / nGroups columns, times ssm_norm, in place over n rows. */
function groupNormRows(d: Mamba2Dims, out: F32Ref, outStride: number, norm: F32Ref, n: number, eps: number): void {
  const [[o, o0], [nw, nw0]] = [out, norm];
  const groupCols = (d.nHeads * d.headDim) / d.nGroups;
  for (let t = 0; t < n; t++) {
    for (let g = 0; g < d.nGroups; g++) {
      const at = o0 + t * outStride + g * groupCols;
      let ss = 0;
      for (let i = 0; i < groupCols; i++) ss += o[at + i] * o[at + i];
      const inv = 1 / Math.sqrt(ss / groupCols + eps);
      for (let i = 0; i < groupCols; i++) o[at + i] = Math.fround(o[at + i] * inv * nw[nw0 + g * groupCols + i]);
    }
  }
}
