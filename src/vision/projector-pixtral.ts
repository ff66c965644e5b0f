/**
 * Pixtral / Mistral Small 3.1 (llama.cpp `clip_graph_pixtral`, projector `pixtral`): a ViT with RMSNorm, no learned
 * positions but 2-D RoPE in attention (`build_rope_2d`: the first half of each head rotated by the patch's row with
 * the even frequencies, the second half by its column with the odd ones), a gated FFN (act(gate) × up), then — Mistral
 * Small 3.1 — RMSNorm × `mm.input_norm` and a patch merger (each merge² block unfolded channel-major, as
 * `ggml_im2col`, and projected back to the ViT width), then a GELU MLP to the text width; the `[IMG_BREAK]`
 * embedding of the file is placed after each row of tokens but the last.
 */

import { matmulRows } from './pixel-shuffle.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { attention, embedPatches, linear } from './siglip-encoder.js';
import type { VisionConfig } from './vision-config.js';
import type { VisionWeights } from './vision-weights.js';
import { throwIfAborted } from '../errors.js';

/** llama.cpp's tensor names (`TN_TOK_IMG_BREAK`, `TN_MM_PATCH_MERGER`, `TN_MM_INP_NORM`, `TN_LLAVA_PROJ`). */
export const PIXTRAL_TENSORS = {
  /** [nEmbdText] */
  imgBreak: 'v.token_embd.img_break',
  /** ggml [d · merge², d] */
  merger: 'mm.patch_merger.weight',
  /** [d] */
  inputNorm: 'mm.input_norm.weight',
  /** ggml [d, hidden] */
  up: 'mm.1.weight',
  upB: 'mm.1.bias',
  /** ggml [hidden, nEmbdText] */
  down: 'mm.2.weight',
  downB: 'mm.2.bias',
} as const;

/** The projector's tensors and their ggml shapes (biases and the merger as the file has them). */
export function pixtralTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const T = PIXTRAL_TENSORS;
  const d = config.nEmbd;
  const hidden = shapeOf(T.up)?.[1] ?? 0;
  const out: Record<string, number[]> = {
    [T.imgBreak]: [nEmbdText],
    [T.up]: [d, hidden],
    [T.down]: [hidden, nEmbdText],
  };
  if (shapeOf(T.upB)) out[T.upB] = [hidden];
  if (shapeOf(T.downB)) out[T.downB] = [nEmbdText];
  if (shapeOf(T.merger)) {
    out[T.merger] = [d * config.merge * config.merge, d];
    out[T.inputNorm] = [d];
  }
  return out;
}

/** RMSNorm × w (+ b) of each row. x: [n, d] → new [n, d]. */
function rmsNorm(x: Float32Array, d: number, w: Float32Array, eps: number, b?: Float32Array): Float32Array {
  const y = new Float32Array(x.length);
  for (let o = 0; o < x.length; o += d) {
    let ss = 0;
    for (let i = 0; i < d; i++) ss += x[o + i] ** 2;
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let i = 0; i < d; i++) y[o + i] = x[o + i] * inv * w[i] + (b === undefined ? 0 : b[i]);
  }
  return y;
}

/** 2-D RoPE in place. x: [gw · gh, heads · hd], token t at row ⌊t / gw⌋, column t mod gw. */
function rope2d(x: Float32Array, gw: number, heads: number, hd: number, base: number): void {
  const half = hd / 2;
  const oddScale = base ** (-2 / hd);
  const n = x.length / (heads * hd);
  for (let t = 0; t < n; t++) {
    const pos = [Math.floor(t / gw), t % gw];
    for (let h = 0; h < heads; h++) {
      for (let part = 0; part < 2; part++) {
        const o = (t * heads + h) * hd + part * half;
        const scale = part === 0 ? 1 : oddScale;
        for (let i0 = 0; i0 < half; i0 += 2) {
          const theta = pos[part] * scale * base ** (-i0 / half);
          const c = Math.cos(theta);
          const s = Math.sin(theta);
          const a = x[o + i0];
          const b = x[o + i0 + 1];
          x[o + i0] = a * c - b * s;
          x[o + i0 + 1] = a * s + b * c;
        }
      }
    }
  }
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);
const gelu = (u: number) => 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));

/** The picture's embeddings, [IMG_BREAK] rows included: [(gh/m) · (gw/m) + gh/m − 1, nEmbdText]. */
export function encodePixtral(w: VisionWeights, pic: PreprocessedImage, signal?: AbortSignal): Float32Array {
  const c = w.config;
  const { nEmbd: d, nFf: f, nHeads, headDim, eps, patchSize: p, merge: m } = c;
  const gw = pic.size / p;
  const gh = (pic.height ?? pic.size) / p;
  const n = gw * gh;
  let x = embedPatches(w, pic, new Float32Array(n * d));
  if (w.preLn !== undefined) x = rmsNorm(x, d, w.preLn.w, eps, w.preLn.b);
  for (const L of w.layers) {
    throwIfAborted(signal, 'encoding the image');
    const h = rmsNorm(x, d, L.ln1W, eps, L.ln1B);
    const q = linear(h, n, d, L.qW, L.qB, d);
    const k = linear(h, n, d, L.kW, L.kB, d);
    const v = linear(h, n, d, L.vW, L.vB, d);
    rope2d(q, gw, nHeads, headDim, c.rope2dTheta);
    rope2d(k, gw, nHeads, headDim, c.rope2dTheta);
    const a = linear(attention(q, k, v, n, nHeads, headDim), n, d, L.oW, L.oB, d);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const h2 = rmsNorm(x, d, L.ln2W, eps, L.ln2B);
    const up = linear(h2, n, d, L.upW, L.upB, f);
    const gate = L.gateW === undefined ? up : matmulRows(h2, d, L.gateW, f);
    for (let i = 0; i < up.length; i++) {
      const g = gate[i];
      const act =
        c.ffn === 'silu' ? g / (1 + Math.exp(-g)) : c.ffn === 'gelu' ? gelu(g) : g / (1 + Math.exp(-1.702 * g));
      up[i] = L.gateW === undefined ? act : act * up[i];
    }
    const down = linear(up, n, f, L.downW, L.downB, d);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
  }
  if (w.postLn !== undefined) x = rmsNorm(x, d, w.postLn.w, eps, w.postLn.b);
  const T = PIXTRAL_TENSORS;
  let px = gw;
  let py = gh;
  if (w.mm[T.merger] !== undefined) {
    const normed = rmsNorm(x, d, w.mm[T.inputNorm], eps);
    px = gw / m;
    py = gh / m;
    const unfolded = new Float32Array(px * py * d * m * m); // [(oy, ox), (e, ky, kx)] as ggml_im2col
    for (let oy = 0; oy < py; oy++) {
      for (let ox = 0; ox < px; ox++) {
        const o = (oy * px + ox) * d * m * m;
        for (let e = 0; e < d; e++) {
          for (let ky = 0; ky < m; ky++) {
            for (let kx = 0; kx < m; kx++) {
              unfolded[o + (e * m + ky) * m + kx] = normed[((oy * m + ky) * gw + ox * m + kx) * d + e];
            }
          }
        }
      }
    }
    x = matmulRows(unfolded, d * m * m, w.mm[T.merger], d);
  }
  const hidden = w.mm[T.up].length / d;
  const h = matmulRows(x, d, w.mm[T.up], hidden, w.mm[T.upB]);
  for (let i = 0; i < h.length; i++) h[i] = gelu(h[i]);
  const out = matmulRows(h, hidden, w.mm[T.down], w.nEmbdText, w.mm[T.downB]);
  const nt = w.nEmbdText;
  const rows = new Float32Array((px * py + py - 1) * nt);
  let r = 0;
  for (let y = 0; y < py; y++) {
    rows.set(out.subarray(y * px * nt, (y + 1) * px * nt), r * nt);
    r += px;
    if (y < py - 1) rows.set(w.mm[T.imgBreak], r++ * nt);
  }
  return rows;
}
