/**
 * The projectors after a LayerNorm ViT on a backend (`vit-ops.ts`), keyed by `clip.projector_type`: the ViT's output
 * is on the host once ([n, d], one read), the cheap permutations run there (gemma3's average pooling, the pixel
 * shuffle of idefics3 / lfm2, llava's patch rows), the matrix products and activations on the backend. Same results
 * as the plain-TS projector files (`projector-*.ts`), which are their oracle.
 */

import type { Activation, Ops } from '../backend/ops.js';
import { llavaWidth } from './llava-features.js';
import { pixelShuffle } from './pixel-shuffle.js';
import { IDEFICS3_FC } from './projector-idefics3.js';
import { type LdpLinear, projectLdp } from './projector-ldp.js';
import { LFM2_TENSORS } from './projector-lfm2.js';
import { MLP_TENSORS } from './projector-mlp.js';
import { PIXTRAL_TENSORS } from './projector-pixtral.js';
import type { VisionConfig } from './vision-config.js';
import type { VitWeights } from './vit-weights.js';

/** What a projector head uses of the encoder: its backend, weights, and buffers grown to the picture. */
export interface VitOpsContext {
  readonly ops: Ops;
  readonly w: VitWeights;
  readonly config: VisionConfig;
  readonly nEmbdText: number;
  /** An activation [≥ rows, cols] kept under `label`. */
  act(label: string, rows: number, cols: number): Activation;
  /** Begins a step of `rows` rows (with multi-stream rope `positions` [4, rows] for a rope in it). */
  step(rows: number, positions?: Int32Array): void;
}

/** A projector head: the ViT's output vit [n, d] of a gw × gh patch grid → [nTokens, nEmbdText]. */
type VitOpsHead = (c: VitOpsContext, vit: Float32Array, gw: number, gh: number) => Promise<Float32Array>;

/** Average pooling of `merge`² patches of the grid. x: [side², d] → [(side / merge)², d]. */
function averagePool(x: Float32Array, side: number, d: number, merge: number): Float32Array {
  const outSide = side / merge;
  const y = new Float32Array(outSide * outSide * d);
  const acc = new Float64Array(d);
  const inv = 1 / (merge * merge);
  for (let oy = 0; oy < outSide; oy++) {
    for (let ox = 0; ox < outSide; ox++) {
      acc.fill(0);
      for (let ky = 0; ky < merge; ky++) {
        for (let kx = 0; kx < merge; kx++) {
          const o = ((oy * merge + ky) * side + ox * merge + kx) * d;
          for (let e = 0; e < d; e++) acc[e] = acc[e]! + x[o + e]!;
        }
      }
      const o = (oy * outSide + ox) * d;
      for (let e = 0; e < d; e++) y[o + e] = acc[e]! * inv;
    }
  }
  return y;
}

/** LayerNorm (eps 1e-5) × w + b of each `len`-long row in place, each part only when given (lfm2's input norm). */
function hostLayerNorm(x: Float32Array, len: number, w?: Float32Array, b?: Float32Array): void {
  for (let o = 0; o < x.length; o += len) {
    if (w !== undefined) {
      let mean = 0;
      for (let i = 0; i < len; i++) mean += x[o + i]!;
      mean /= len;
      let v = 0;
      for (let i = 0; i < len; i++) v += (x[o + i]! - mean) ** 2;
      const inv = 1 / Math.sqrt(v / len + 1e-5);
      for (let i = 0; i < len; i++) x[o + i] = (x[o + i]! - mean) * inv * w[i]!;
    }
    if (b !== undefined) for (let i = 0; i < len; i++) x[o + i] = x[o + i]! + b[i]!;
  }
}

/** The tensor names of a two-layer MLP. */
interface MlpNames {
  readonly up: string;
  readonly upB: string;
  readonly down: string;
  readonly downB: string;
}

/** rows [t, inDim] → up (+b) → GELU (ggml's f16 table) → down (+b) → [t, nEmbdText], on the backend. */
async function geluMlp(c: VitOpsContext, rows: Float32Array, inDim: number, names: MlpNames): Promise<Float32Array> {
  const { ops, w } = c;
  const t = rows.length / inDim;
  const up = w.mm[names.up]!;
  const input = c.act('proj.in', t, inDim); // [t, inDim]
  const mid = c.act('proj.mid', t, up.nRows); // [t, hidden]
  const out = c.act('proj.out', t, c.nEmbdText); // [t, nEmbdText]
  c.step(t);
  ops.setRows(input, rows, t);
  ops.matmul(mid, input, up, t, w.mm[names.upB] ?? null);
  ops.gelu(mid, t);
  ops.matmul(out, mid, w.mm[names.down]!, t, w.mm[names.downB] ?? null);
  ops.endStep();
  return ops.read(out, t);
}

/** RMSNorm × w of each `len`-long row: a new array. */
function hostRmsNorm(x: Float32Array, len: number, w: Float32Array, eps: number): Float32Array {
  const y = new Float32Array(x.length);
  for (let o = 0; o < x.length; o += len) {
    let ss = 0;
    for (let i = 0; i < len; i++) ss += x[o + i]! ** 2;
    const inv = 1 / Math.sqrt(ss / len + eps);
    for (let i = 0; i < len; i++) y[o + i] = x[o + i]! * inv * w[i]!;
  }
  return y;
}

/** Each merge² block of the grid unfolded channel-major, as `ggml_im2col`: x [gh·gw, d] → [(gh/m)·(gw/m), d·m²]. */
function unfoldBlocks(x: Float32Array, gw: number, gh: number, d: number, m: number): Float32Array {
  const [px, py] = [gw / m, gh / m];
  const out = new Float32Array(px * py * d * m * m); // [(oy, ox), (e, ky, kx)]
  for (let oy = 0; oy < py; oy++) {
    for (let ox = 0; ox < px; ox++) {
      const o = (oy * px + ox) * d * m * m;
      for (let e = 0; e < d; e++) {
        for (let ky = 0; ky < m; ky++) {
          for (let kx = 0; kx < m; kx++)
            out[o + (e * m + ky) * m + kx] = x[((oy * m + ky) * gw + ox * m + kx) * d + e]!;
        }
      }
    }
  }
  return out;
}

/**
 * Pixtral: (Mistral Small 3.1: RMSNorm × input_norm and the patch merger over unfolded merge² blocks →) GELU MLP on
 * the backend, then the `[IMG_BREAK]` row after each row of tokens but the last, on the host.
 */
async function pixtralHead(c: VitOpsContext, vit: Float32Array, gw: number, gh: number): Promise<Float32Array> {
  const { ops, w, config, nEmbdText: nt } = c;
  const T = PIXTRAL_TENSORS;
  const { nEmbd: d, merge: m } = config;
  const merger = w.mm[T.merger];
  const [px, py] = merger ? [gw / m, gh / m] : [gw, gh];
  const t = px * py;
  const up = w.mm[T.up]!;
  const merged = c.act(merger ? 'proj.merged' : 'proj.in', t, d); // [t, d]: the merger's output, else the ViT rows
  const mid = c.act('proj.mid', t, up.nRows); // [t, hidden]
  const out = c.act('proj.out', t, nt); // [t, nEmbdText]
  c.step(t);
  if (merger) {
    const unfolded = unfoldBlocks(hostRmsNorm(vit, d, w.mmHost[T.inputNorm]!, config.eps), gw, gh, d, m);
    const input = c.act('proj.in', t, d * m * m); // [t, d·m²]
    ops.setRows(input, unfolded, t);
    ops.matmul(merged, input, merger, t); // [t, d]
  } else ops.setRows(merged, vit, t);
  ops.matmul(mid, merged, up, t, w.mm[T.upB] ?? null);
  ops.gelu(mid, t);
  ops.matmul(out, mid, w.mm[T.down]!, t, w.mm[T.downB] ?? null);
  ops.endStep();
  const emb = await ops.read(out, t);
  const rows = new Float32Array((t + py - 1) * nt);
  let r = 0;
  for (let y = 0; y < py; y++) {
    rows.set(emb.subarray(y * px * nt, (y + 1) * px * nt), r * nt);
    r += px;
    if (y < py - 1) rows.set(w.mmHost[T.imgBreak]!, r++ * nt);
  }
  return rows;
}

export const VIT_OPS_HEADS: Readonly<Record<string, VitOpsHead>> = {
  // Average pooling of merge² patches → RMSNorm × soft_emb_norm → the transposed projection.
  gemma3: async (c, vit, gw) => {
    const { ops, w, config } = c;
    const d = config.nEmbd;
    const pooled = averagePool(vit, gw, d, config.merge); // [t, d]
    const t = pooled.length / d;
    const input = c.act('proj.in', t, d);
    const out = c.act('proj.out', t, c.nEmbdText);
    c.step(t);
    ops.setRows(input, pooled, t);
    ops.rmsNorm(input, input, w.softEmbNorm, config.eps, t); // × soft_emb_norm
    ops.matmul(out, input, w.proj!, t); // out [t, nEmbdText]
    ops.endStep();
    return ops.read(out, t);
  },
  // Pixel shuffle → one linear layer without bias.
  idefics3: async (c, vit, gw, gh) => {
    const { ops, w, config } = c;
    const s = config.merge;
    const inDim = config.nEmbd * s * s;
    const shuffled = pixelShuffle(vit, gw, gh, config.nEmbd, s); // [t, d·s²]
    const t = shuffled.length / inDim;
    const input = c.act('proj.in', t, inDim);
    const out = c.act('proj.out', t, c.nEmbdText);
    c.step(t);
    ops.setRows(input, shuffled, t);
    ops.matmul(out, input, w.mm[IDEFICS3_FC]!, t);
    ops.endStep();
    return ops.read(out, t);
  },
  // Pixel unshuffle → the optional input LayerNorm (host) → GELU MLP.
  lfm2: (c, vit, gw, gh) => {
    const { config, w } = c;
    const s = config.merge;
    const inDim = config.nEmbd * s * s;
    const shuffled = pixelShuffle(vit, gw, gh, config.nEmbd, s); // [t, d·s²]
    hostLayerNorm(shuffled, inDim, w.mmHost[LFM2_TENSORS.normW], w.mmHost[LFM2_TENSORS.normB]);
    return geluMlp(c, shuffled, inDim, LFM2_TENSORS);
  },
  // llava: the patch rows (llama.cpp's `patches` input takes rows 1 … nPatches when there is a class token) → GELU MLP.
  mlp: (c, vit, gw, gh) => {
    const d = llavaWidth(c.config); // n_embd per stacked feature layer
    const nPatches = gw * gh;
    const rows = c.w.classEmbd ? vit.subarray(d, (nPatches + 1) * d) : vit.subarray(0, nPatches * d);
    return geluMlp(c, rows, d, MLP_TENSORS);
  },
  pixtral: pixtralHead,
  // MobileVLM's LDP: its MLP and pointwise convs on the backend, the depthwise convs, norms and gates on the host.
  ldp: async (c, vit, gw, gh) => {
    const { ops, w } = c;
    const linear: LdpLinear = async (x, inDim, weight, outDim, bias) => {
      const rows = x.length / inDim;
      const input = c.act(`ldp.in.${inDim}`, rows, inDim); // [rows, inDim]
      const out = c.act(`ldp.out.${outDim}`, rows, outDim); // [rows, outDim]
      c.step(rows);
      ops.setRows(input, x, rows);
      ops.matmul(out, input, w.mm[weight]!, rows, bias === undefined ? null : w.mm[bias]!);
      ops.endStep();
      return ops.read(out, rows);
    };
    return projectLdp(c.config, w.mmHost, vit, gw * gh, w.classEmbd !== null, c.nEmbdText, linear);
  },
};
