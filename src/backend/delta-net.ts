/**
 * The gated DeltaNet token mixer of qwen35 over plain f32 arrays (`Ops.deltaNet`), as llama.cpp's
 * `build_layer_attn_linear` + fused `ggml_gated_delta_net`: causal depthwise conv1d (+ SiLU) over the mixed q|k|v
 * projection, L2-normalised q and k, then per value head the gated delta rule on a [headV, headK] state, and the
 * output RMS-normalised per head × SiLU(z). Tokens run one after another (the recurrent form; a chunked prefill is
 * still to come), so decode and prefill share one path.
 */

import type { Activation, Weight } from './ops.js';
import type { DeltaNetDims, DeltaNetInputs, DeltaNetWeights } from './delta-net-types.js';

/** Where a backend keeps an activation's or an f32 weight's values: the array and the f32 index of element 0. */
export type HostView = (x: Activation | Weight) => readonly [Float32Array, number];

/** Where one call of `deltaNetRows` reads and writes (f32 indices into the arrays given). */
interface DeltaNetArgs {
  readonly dims: DeltaNetDims;
  /** [n, valueDim] output (before ssm_out). */
  readonly out: Float32Array;
  readonly outAt: number;
  readonly outStride: number;
  /** [n, convDim] mixed projection q | k | v (attn_qkv). */
  readonly mixed: Float32Array;
  readonly mixedAt: number;
  readonly mixedStride: number;
  /** [n, valueDim] output gate z (attn_gate). */
  readonly z: Float32Array;
  readonly zAt: number;
  readonly zStride: number;
  /** [n, nVHeads] beta logits (ssm_beta, before the sigmoid). */
  readonly beta: Float32Array;
  readonly betaAt: number;
  readonly betaStride: number;
  /** [n, nVHeads] decay logits (ssm_alpha, before dt bias and softplus). */
  readonly alpha: Float32Array;
  readonly alphaAt: number;
  readonly alphaStride: number;
  /** [convDim, taps] depthwise kernel (ggml [taps, convDim]). */
  readonly kernel: Float32Array;
  readonly kernelAt: number;
  /** [nVHeads] ssm_dt.bias, [nVHeads] ssm_a (−exp(A_log)), [headV] ssm_norm. */
  readonly dtBias: Float32Array;
  readonly dtBiasAt: number;
  readonly a: Float32Array;
  readonly aAt: number;
  readonly norm: Float32Array;
  readonly normAt: number;
  /** [(taps − 1)·convDim + nVHeads·headV·headK] state of this layer in this slot, updated in place. */
  readonly state: Float32Array;
  readonly n: number;
  readonly eps: number;
  /** The sequence starts here: the old state reads as zeros. */
  readonly fresh: boolean;
}

/** f32 values of one layer's state per sequence: the conv window, then one [headV, headK] matrix per value head. */
export function deltaNetStateSize(d: DeltaNetDims): number {
  return (d.convWidth - 1) * convDimOf(d) + d.nVHeads * d.headV * d.headK;
}

/** Channels of the conv1d: q and k (nKHeads·headK each) and v (nVHeads·headV). */
function convDimOf(d: DeltaNetDims): number {
  return 2 * d.nKHeads * d.headK + d.nVHeads * d.headV;
}

/** Scratch reused by every call (single-threaded, never re-entered): grows once, decode allocates nothing. */
let scratch = new Float32Array(256);

const silu = (x: number): number => x / (1 + Math.exp(-x));
const softplus = (x: number): number => (x > 20 ? x : Math.log(1 + Math.exp(x)));

/** out = gatedNorm(deltaRule(silu(conv([state ‖ mixed]))), z) for n rows, the state advanced past them. */
function deltaNetRows(a: DeltaNetArgs): void {
  const d = a.dims;
  const C = convDimOf(d);
  const taps = d.convWidth;
  const w = taps - 1; // conv state rows
  const [hK, hV, nK, nV] = [d.headK, d.headV, d.nKHeads, d.nVHeads];
  const state = a.state;
  const sAt = w * C; // delta states start here
  if (a.fresh) state.fill(0);
  if (scratch.length < C + hV) scratch = new Float32Array(C + hV);
  const conv = scratch; // [C] this token's conv output, then q | k | v views; [hV] one head's output after it
  const oAt = C;
  const scale = 1 / Math.sqrt(hK);
  for (let t = 0; t < a.n; t++) {
    const row = a.mixedAt + t * a.mixedStride;
    // Causal depthwise conv over [state rows ‖ this token], SiLU; then the window slides one row.
    for (let c = 0; c < C; c++) {
      const kr = a.kernelAt + c * taps;
      let sum = 0;
      for (let k = 0; k < w; k++) sum += a.kernel[kr + k] * state[k * C + c];
      const x = a.mixed[row + c];
      sum += a.kernel[kr + w] * x;
      conv[c] = silu(Math.fround(sum));
      for (let k = 0; k + 1 < w; k++) state[k * C + c] = state[(k + 1) * C + c];
      if (w > 0) state[(w - 1) * C + c] = x;
    }
    // L2 norm of each q and k head: x / sqrt(Σx² + eps) (llama.cpp's build_gdn_l2_norm).
    for (let h = 0; h < 2 * nK; h++) {
      let ss = 0;
      for (let i = 0; i < hK; i++) ss += conv[h * hK + i] * conv[h * hK + i];
      const inv = 1 / Math.sqrt(ss + a.eps);
      for (let i = 0; i < hK; i++) conv[h * hK + i] *= inv;
    }
    const vAt = 2 * nK * hK;
    for (let h = 0; h < nV; h++) {
      const qAt = (h % nK) * hK; // value head h reads key head h mod nKHeads (ggml's repeat)
      const kAt = nK * hK + qAt;
      const g = Math.exp(
        softplus(a.alpha[a.alphaAt + t * a.alphaStride + h] + a.dtBias[a.dtBiasAt + h]) * a.a[a.aAt + h],
      );
      const beta = 1 / (1 + Math.exp(-a.beta[a.betaAt + t * a.betaStride + h]));
      const S = sAt + h * hV * hK; // [hV rows, hK cols]
      for (let j = 0; j < hV; j++) {
        const r = S + j * hK;
        let sk = 0;
        for (let i = 0; i < hK; i++) {
          const s = Math.fround(state[r + i] * g);
          state[r + i] = s;
          sk += s * conv[kAt + i];
        }
        const delta = (conv[vAt + h * hV + j] - sk) * beta;
        let o = 0;
        for (let i = 0; i < hK; i++) {
          const s = Math.fround(state[r + i] + conv[kAt + i] * delta);
          state[r + i] = s;
          o += s * conv[qAt + i];
        }
        conv[oAt + j] = o * scale;
      }
      // Gated RMSNorm of this head: norm(o) · ssm_norm · silu(z).
      let ss = 0;
      for (let j = 0; j < hV; j++) ss += conv[oAt + j] * conv[oAt + j];
      const inv = 1 / Math.sqrt(ss / hV + a.eps);
      const zr = a.zAt + t * a.zStride + h * hV;
      const outR = a.outAt + t * a.outStride + h * hV;
      for (let j = 0; j < hV; j++) {
        a.out[outR + j] = Math.fround(conv[oAt + j] * inv * a.norm[a.normAt + j] * silu(a.z[zr + j]));
      }
    }
  }
}

/** `Ops.splitHeadPairs` on a host backend: q[r, h·D + i] = qg[r, 2h·D + i], gate[r, h·D + i] = qg[r, (2h+1)·D + i]. */
export function hostSplitHeadPairs(
  view: HostView,
  q: Activation,
  gate: Activation,
  qg: Activation,
  n: number,
  headDim: number,
): void {
  const [[qd, qAt], [gd, gAt], [src, sAt]] = [view(q), view(gate), view(qg)];
  const cols = q.cols;
  for (let r = 0; r < n; r++) {
    for (let h = 0; h < cols / headDim; h++) {
      const from = sAt + r * qg.cols + 2 * h * headDim;
      const to = r * cols + h * headDim;
      for (let i = 0; i < headDim; i++) {
        qd[qAt + to + i] = src[from + i];
        gd[gAt + to + i] = src[from + headDim + i];
      }
    }
  }
}

/** `Ops.mulSigmoid` on a host backend: x[i] *= sigmoid(gate[i]) over n rows. */
export function hostMulSigmoid(view: HostView, x: Activation, gate: Activation, n: number): void {
  const [[xd, xAt], [gd, gAt]] = [view(x), view(gate)];
  for (let i = 0; i < n * x.cols; i++) xd[xAt + i] = Math.fround(xd[xAt + i] / (1 + Math.exp(-gd[gAt + i])));
}

/** `Ops.deltaNet` on a host backend whose values `view` locates (cpu, wasm). */
export function hostDeltaNet(
  view: HostView,
  out: Activation,
  x: DeltaNetInputs,
  n: number,
  w: DeltaNetWeights,
  eps: number,
  state: Float32Array,
  fresh: boolean,
): void {
  const [o, outAt] = view(out);
  const [mixed, mixedAt] = view(x.mixed);
  const [z, zAt] = view(x.z);
  const [beta, betaAt] = view(x.beta);
  const [alpha, alphaAt] = view(x.alpha);
  const [kernel, kernelAt] = view(w.conv);
  const [dtBias, dtBiasAt] = view(w.dtBias);
  const [aw, aAt] = view(w.a);
  const [norm, normAt] = view(w.norm);
  deltaNetRows({
    dims: w.dims,
    out: o,
    outAt,
    outStride: out.cols,
    mixed,
    mixedAt,
    mixedStride: x.mixed.cols,
    z,
    zAt,
    zStride: x.z.cols,
    beta,
    betaAt,
    betaStride: x.beta.cols,
    alpha,
    alphaAt,
    alphaStride: x.alpha.cols,
    kernel,
    kernelAt,
    dtBias,
    dtBiasAt,
    a: aw,
    aAt,
    norm,
    normAt,
    state,
    n,
    eps,
    fresh,
  });
}
