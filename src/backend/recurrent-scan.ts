/**
 * The scans of the recurrent token mixers (gated DeltaNet, Mamba-2) over their whole batch of tokens, head by head:
 * one head's state stays in cache while every token of the step runs through it, as llama.cpp's CPU
 * `ggml_gated_delta_net` (heads outer, tokens inner; per-token numerics, so prefill equals decode row for row). The
 * plain-TS forms here are the reference; a backend with native kernels (the WASM SIMD ones) hands its own
 * `RecurrentKernels` to the host ops, which then also keep the state in its memory.
 */

/** An f32 array and the index of element 0 of the values meant (a backend's memory and an offset in it). */
export type F32Ref = readonly [Float32Array, number];

/** Where a DeltaNet scan reads and writes; strides in f32. */
export interface DeltaNetScanArgs {
  /** [nVHeads, headV, headK] delta states of this layer in this slot, updated in place. */
  readonly state: F32Ref;
  /** [n, convStride] q | k | v after the conv1d, SiLU and the q/k L2 norms. */
  readonly conv: F32Ref;
  readonly convStride: number;
  /** [n, gateStride] log decay per value head (softplus(alpha + dt_bias) · ssm_a); [n, betaStride] σ(beta). */
  readonly gate: F32Ref;
  readonly gateStride: number;
  readonly beta: F32Ref;
  readonly betaStride: number;
  /** [n, outStride] raw attention output per value head (before the gated norm). */
  readonly out: F32Ref;
  readonly outStride: number;
  readonly n: number;
  readonly headK: number;
  readonly nKHeads: number;
  readonly headV: number;
  readonly nVHeads: number;
}

/** Where a Mamba-2 scan reads and writes; strides in f32. */
export interface Mamba2ScanArgs {
  /** [nHeads, headDim, dState] SSM states of this layer in this slot, updated in place. */
  readonly state: F32Ref;
  /** [n, convStride] x | B | C after the conv1d (+ bias) and SiLU. */
  readonly conv: F32Ref;
  readonly convStride: number;
  /** [n, zxStride] ssm_in output: z at column 0, dt (after bias and softplus) at column `dtCol`. */
  readonly zx: F32Ref;
  readonly zxStride: number;
  readonly dtCol: number;
  /** [nHeads] ssm_a (−exp(A_log)), ssm_d. */
  readonly a: F32Ref;
  readonly d: F32Ref;
  /** [n, outStride] y · SiLU(z) (before the grouped norm). */
  readonly out: F32Ref;
  readonly outStride: number;
  readonly n: number;
  readonly nHeads: number;
  readonly headDim: number;
  readonly dState: number;
  readonly nGroups: number;
}

/** Where a causal depthwise conv1d + SiLU of a step reads and writes; strides in f32. */
interface ConvSiluArgs {
  /** [taps − 1, channels] conv window at the start of the layer's state, slid past the n rows in place. */
  readonly state: F32Ref;
  /** [n, xStride] the rows convolved (channels columns used). */
  readonly x: F32Ref;
  readonly xStride: number;
  /** [channels, taps] depthwise kernel; [channels] bias or null. */
  readonly kernel: F32Ref;
  readonly bias: F32Ref | null;
  /** [n, outStride] SiLU(conv1d + bias). */
  readonly out: F32Ref;
  readonly outStride: number;
  readonly n: number;
  readonly channels: number;
  readonly taps: number;
}

/** The scans (and the row loops around them) a backend runs natively, and the state arrays they need placed. */
export interface RecurrentKernels {
  /** A zeroed state array of `size` f32 where the kernels read it; the getter returns a current view of it. */
  stateArray(size: number, what: string): () => Float32Array;
  deltaNetScan(a: DeltaNetScanArgs): void;
  mamba2Scan(a: Mamba2ScanArgs): void;
  convSilu(a: ConvSiluArgs): void;
  /** x[t, h·headDim …] /= sqrt(Σx² + eps) for heads h < nHeads of n rows ([n, stride], in place). */
  l2NormHeads(x: F32Ref, stride: number, n: number, nHeads: number, headDim: number, eps: number): void;
  /** out[t, h·headV …] = RMSNorm(o) · norm · SiLU(z) per value head, in place (DeltaNet's gated norm). */
  gatedNormHeads(
    out: F32Ref,
    outStride: number,
    z: F32Ref,
    zStride: number,
    norm: F32Ref,
    n: number,
    nHeads: number,
    headV: number,
    eps: number,
  ): void;
}

/** ggml_compute_softplus_f32. */
export const softplus = (x: number): number => (x > 20 ? x : Math.log(1 + Math.exp(x)));
const silu = (x: number): number => x / (1 + Math.exp(-x));

/** The delta rule per value head over n tokens: S = S·g; δ = (v − S·k)·β; S += k ⊗ δ; o = S·q / √headK. */
export function tsDeltaNetScan(a: DeltaNetScanArgs): void {
  const [hK, hV, nK] = [a.headK, a.headV, a.nKHeads];
  const [[st, st0], [cv, cv0], [ga, ga0], [be, be0], [o, o0]] = [a.state, a.conv, a.gate, a.beta, a.out];
  const scale = 1 / Math.sqrt(hK);
  const vAt = 2 * nK * hK;
  for (let h = 0; h < a.nVHeads; h++) {
    const qAt = (h % nK) * hK; // value head h reads key head h mod nKHeads (ggml's repeat)
    const kAt = nK * hK + qAt;
    const S = st0 + h * hV * hK; // [hV rows, hK cols]
    for (let t = 0; t < a.n; t++) {
      const row = cv0 + t * a.convStride;
      const g = Math.exp(ga[ga0 + t * a.gateStride + h]);
      const beta = be[be0 + t * a.betaStride + h];
      const outR = o0 + t * a.outStride + h * hV;
      for (let j = 0; j < hV; j++) {
        const r = S + j * hK;
        let sk = 0;
        for (let i = 0; i < hK; i++) {
          const s = Math.fround(st[r + i] * g);
          st[r + i] = s;
          sk += s * cv[row + kAt + i];
        }
        const delta = (cv[row + vAt + h * hV + j] - sk) * beta;
        let y = 0;
        for (let i = 0; i < hK; i++) {
          const s = Math.fround(st[r + i] + cv[row + kAt + i] * delta);
          st[r + i] = s;
          y += s * cv[row + qAt + i];
        }
        o[outR + j] = y * scale;
      }
    }
  }
}

/** The selective scan per head over n tokens: S = S·dA + B·(x·dt); y = S·C + D·x; out = y · SiLU(z). */
export function tsMamba2Scan(a: Mamba2ScanArgs): void {
  const [[st, st0], [cv, cv0], [zx, zx0], [aw, aw0], [dw, dw0], [o, o0]] = [a.state, a.conv, a.zx, a.a, a.d, a.out];
  const ds = a.dState;
  const inner = a.nHeads * a.headDim;
  const headsPerGroup = a.nHeads / a.nGroups;
  for (let h = 0; h < a.nHeads; h++) {
    const g = Math.floor(h / headsPerGroup);
    const bAt = inner + g * ds;
    const cAt = inner + a.nGroups * ds + g * ds;
    for (let t = 0; t < a.n; t++) {
      const row = cv0 + t * a.convStride;
      const zRow = zx0 + t * a.zxStride;
      const dt = zx[zRow + a.dtCol + h];
      const dA = Math.fround(Math.exp(Math.fround(dt * aw[aw0 + h])));
      for (let i = 0; i < a.headDim; i++) {
        const ii = h * a.headDim + i;
        const xv = cv[row + ii];
        const xdt = Math.fround(xv * dt);
        const s = st0 + ii * ds;
        let sum = 0;
        for (let j = 0; j < ds; j++) {
          const v = Math.fround(Math.fround(st[s + j] * dA) + Math.fround(cv[row + bAt + j] * xdt));
          st[s + j] = v;
          sum += v * cv[row + cAt + j];
        }
        const y = Math.fround(Math.fround(sum) + Math.fround(xv * dw[dw0 + h]));
        o[o0 + t * a.outStride + ii] = Math.fround(silu(zx[zRow + ii]) * y);
      }
    }
  }
}
