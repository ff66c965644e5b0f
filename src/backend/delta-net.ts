/**
 * The gated DeltaNet token mixer of qwen35 over plain f32 arrays (`Ops.deltaNet`), as llama.cpp's
 * `build_layer_attn_linear` + fused `ggml_gated_delta_net`: causal depthwise conv1d (+ SiLU) over the mixed q|k|v
 * projection, L2-normalised q and k, then per value head the gated delta rule on a [headV, headK] state, and the
 * output RMS-normalised per head × SiLU(z). The conv1d runs over all rows of the step, then the delta rule head by
 * head over every token (recurrent-scan.ts, as llama.cpp's CPU op), so decode and prefill share one path.
 */

import type { Activation, Weight } from './ops.js';
import type { DeltaNetDims, DeltaNetInputs, DeltaNetWeights } from './delta-net-types.js';
import { type F32Ref, type RecurrentKernels, softplus, tsDeltaNetScan } from './recurrent-scan.js';

/** Where a backend keeps an activation's or an f32 weight's values: the array and the f32 index of element 0. */
export type HostView = (x: Activation | Weight) => readonly [Float32Array, number];

/** f32 values of one layer's state per sequence: the conv window, then one [headV, headK] matrix per value head. */
export function deltaNetStateSize(d: DeltaNetDims): number {
  return (d.convWidth - 1) * convDimOf(d) + d.nVHeads * d.headV * d.headK;
}

/** Channels of the conv1d: q and k (nKHeads·headK each) and v (nVHeads·headV). */
function convDimOf(d: DeltaNetDims): number {
  return 2 * d.nKHeads * d.headK + d.nVHeads * d.headV;
}

const silu = (x: number): number => x / (1 + Math.exp(-x));

/**
 * conv[t] = silu(conv1d([state ‖ mixed])[t]) for n rows, q and k heads L2-normalised (llama.cpp's
 * build_gdn_l2_norm: x / sqrt(Σx² + eps)); the conv window then holds the last taps − 1 rows of [state ‖ mixed].
 */
function convRows(
  d: DeltaNetDims,
  conv: F32Ref,
  convStride: number,
  mixed: F32Ref,
  mixedStride: number,
  kernel: F32Ref,
  state: Float32Array,
  n: number,
  eps: number,
): void {
  const C = convDimOf(d);
  const taps = d.convWidth;
  const w = taps - 1; // conv state rows
  const [[cv, cv0], [mx, mx0], [kw, kw0]] = [conv, mixed, kernel];
  for (let t = 0; t < n; t++) {
    const out = cv0 + t * convStride; // [n, convStride] conv scratch rows, C used
    for (let c = 0; c < C; c++) {
      const kr = kw0 + c * taps;
      let sum = 0;
      for (let k = 0; k < taps; k++) {
        const src = t + k; // row of [state ‖ mixed]
        sum += kw[kr + k] * (src < w ? state[src * C + c] : mx[mx0 + (src - w) * mixedStride + c]);
      }
      cv[out + c] = silu(Math.fround(sum));
    }
    for (let h = 0; h < 2 * d.nKHeads; h++) {
      const at = out + h * d.headK;
      let ss = 0;
      for (let i = 0; i < d.headK; i++) ss += cv[at + i] * cv[at + i];
      const inv = 1 / Math.sqrt(ss + eps);
      for (let i = 0; i < d.headK; i++) cv[at + i] *= inv;
    }
  }
  // The window slides n rows: row r becomes row n + r of [state ‖ mixed] (ascending: n + r ≥ r is still unread).
  for (let r = 0; r < w; r++) {
    const src = n + r;
    if (src < w) state.copyWithin(r * C, src * C, src * C + C);
    else for (let c = 0; c < C; c++) state[r * C + c] = mx[mx0 + (src - w) * mixedStride + c];
  }
}

/** In place over n rows: alpha → log decay softplus(alpha + dt_bias) · ssm_a, beta → σ(beta) (as llama.cpp's graph). */
function gateRows(
  nV: number,
  alpha: F32Ref,
  alphaStride: number,
  beta: F32Ref,
  betaStride: number,
  dtBias: F32Ref,
  a: F32Ref,
  n: number,
): void {
  const [[al, al0], [be, be0], [dtb, dtb0], [aw, aw0]] = [alpha, beta, dtBias, a];
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < nV; h++) {
      const ai = al0 + t * alphaStride + h;
      al[ai] = softplus(Math.fround(al[ai] + dtb[dtb0 + h])) * aw[aw0 + h];
      const bi = be0 + t * betaStride + h;
      be[bi] = 1 / (1 + Math.exp(-be[bi]));
    }
  }
}

/** out[t, h] = RMSNorm(out[t, h]) · ssm_norm · SiLU(z[t, h]) per value head, in place. */
function gatedNormRows(
  d: DeltaNetDims,
  out: F32Ref,
  outStride: number,
  z: F32Ref,
  zStride: number,
  norm: F32Ref,
  n: number,
  eps: number,
): void {
  const [[o, o0], [zv, z0], [nw, nw0]] = [out, z, norm];
  const hV = d.headV;
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < d.nVHeads; h++) {
      const at = o0 + t * outStride + h * hV;
      const zr = z0 + t * zStride + h * hV;
      let ss = 0;
      for (let j = 0; j < hV; j++) ss += o[at + j] * o[at + j];
      const inv = 1 / Math.sqrt(ss / hV + eps);
      for (let j = 0; j < hV; j++) o[at + j] = Math.fround(o[at + j] * inv * nw[nw0 + j] * silu(zv[zr + j]));
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

/**
 * `Ops.deltaNet` on a host backend whose values `view` locates (cpu, wasm): the conv1d rows into the conv scratch, the
 * gates in place of alpha and beta, the scan head by head over all n tokens (`kernels`' native one when given, else
 * recurrent-scan.ts's), the gated norm. Overwrites x.conv, x.alpha and x.beta.
 */
export function hostDeltaNet(
  view: HostView,
  out: Activation,
  x: DeltaNetInputs,
  n: number,
  w: DeltaNetWeights,
  eps: number,
  state: Float32Array,
  fresh: boolean,
  kernels: RecurrentKernels | null,
): void {
  const d = w.dims;
  if (fresh) state.fill(0);
  const conv = view(x.conv);
  const C = convDimOf(d);
  if (kernels) {
    const args = {
      state: [state, 0] as const,
      x: view(x.mixed),
      xStride: x.mixed.cols,
      kernel: view(w.conv),
      bias: null,
    };
    kernels.convSilu({ ...args, out: conv, outStride: x.conv.cols, n, channels: C, taps: d.convWidth });
    kernels.l2NormHeads(conv, x.conv.cols, n, 2 * d.nKHeads, d.headK, eps);
  } else {
    convRows(d, conv, x.conv.cols, view(x.mixed), x.mixed.cols, view(w.conv), state, n, eps);
  }
  const [gate, beta] = [view(x.alpha), view(x.beta)];
  gateRows(d.nVHeads, gate, x.alpha.cols, beta, x.beta.cols, view(w.dtBias), view(w.a), n);
  const scan = {
    state: [state, (d.convWidth - 1) * C] as const,
    conv,
    convStride: x.conv.cols,
    gate,
    gateStride: x.alpha.cols,
    beta,
    betaStride: x.beta.cols,
    out: view(out),
    outStride: out.cols,
    n,
    ...d,
  };
  if (kernels) kernels.deltaNetScan(scan);
  else tsDeltaNetScan(scan);
  const norm = [scan.out, out.cols, view(x.z), x.z.cols, view(w.norm), n] as const;
  if (kernels) kernels.gatedNormHeads(...norm, d.nVHeads, d.headV, eps);
  else gatedNormRows(d, ...norm, eps);
}
