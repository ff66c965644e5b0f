/**
 * The SigLIP ViT encoder with the gemma3 projector on the plain-TS reference path (llama.cpp `clip_graph_siglip`,
 * `tools/mtmd/models/siglip.cpp` and `clip_graph::build_vit` in `clip.cpp`):
 *   patch embedding (the stride-`patch` conv as a matmul over patches) + bias + learned position embeddings
 *   (then a pre-LN where the file has one);
 *   per block: x += Wo·attn(LN1(x)) (non-causal, all heads, scale 1/√head_dim), x += down(GELU(up(LN2(x))));
 *   post-LN; `merge`×`merge` average pooling over the patch grid; RMSNorm × soft_emb_norm; projection to the text
 *   model's n_embd. Output: [nTokens, nEmbdText] f32, nTokens = (imageSize / patch / merge)².
 * Plain loops in f64 accumulators: the reference the fast backends are tested against, not a fast path itself.
 */

import { throwIfAborted } from '../errors.js';
import { roundToF16 } from '../quant/half.js';
import type { PreprocessedImage } from './preprocess-image.js';
import type { VisionWeights } from './vision-weights.js';
import { concatRows } from './llava-features.js';

/** √(2/π), the constant of the tanh approximation of GELU (as llama.cpp's `ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** y = W·x + b for each of `n` rows of `x`. x: [n, inDim], W: [outDim, inDim], b: [outDim] → [n, outDim]. */
export function linear(x: Float32Array, n: number, inDim: number, w: Float32Array, b: Float32Array, outDim: number) {
  const y = new Float32Array(n * outDim);
  for (let t = 0; t < n; t++) {
    const xo = t * inDim;
    for (let j = 0; j < outDim; j++) {
      const wo = j * inDim;
      let s = 0;
      for (let i = 0; i < inDim; i++) s += w[wo + i] * x[xo + i];
      y[t * outDim + j] = s + b[j];
    }
  }
  return y;
}

/** LayerNorm (mean/variance, eps) × w + b over each row. x: [n, d] → new [n, d]. */
function layerNorm(x: Float32Array, n: number, d: number, w: Float32Array, b: Float32Array, eps: number) {
  const y = new Float32Array(n * d);
  for (let t = 0; t < n; t++) {
    const o = t * d;
    let mean = 0;
    for (let i = 0; i < d; i++) mean += x[o + i];
    mean /= d;
    let v = 0;
    for (let i = 0; i < d; i++) v += (x[o + i] - mean) ** 2;
    const inv = 1 / Math.sqrt(v / d + eps);
    for (let i = 0; i < d; i++) y[o + i] = (x[o + i] - mean) * inv * w[i] + b[i];
  }
  return y;
}

/** Non-causal multi-head attention. q, k, v: [n, heads · hd] → [n, heads · hd]. */
export function attention(q: Float32Array, k: Float32Array, v: Float32Array, n: number, heads: number, hd: number) {
  const d = heads * hd;
  const out = new Float32Array(n * d);
  const scores = new Float64Array(n);
  const scale = 1 / Math.sqrt(hd);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let c = 0; c < hd; c++) s += q[i * d + h * hd + c] * k[j * d + h * hd + c];
        scores[j] = s * scale;
        if (scores[j] > max) max = scores[j];
      }
      let sum = 0;
      for (let j = 0; j < n; j++) {
        scores[j] = Math.exp(scores[j] - max);
        sum += scores[j];
      }
      for (let c = 0; c < hd; c++) {
        let acc = 0;
        for (let j = 0; j < n; j++) acc += scores[j] * v[j * d + h * hd + c];
        out[i * d + h * hd + c] = acc / sum;
      }
    }
  }
  return out;
}

/**
 * The patch embeddings + position embeddings. pixels: [3, size, size] → [nPatches, d]. Pixels and kernel are rounded
 * to f16 first: llama.cpp's `ggml_conv_2d` builds an F16 im2col on every backend and multiplies it in f16 (without
 * this the embeddings differ from mtmd's by ~3e-4 relative; with it and ggml's f16 GELU table, by ~1e-6).
 */
export function embedPatches(w: VisionWeights, img: PreprocessedImage, posEmbd: Float32Array): Float32Array {
  const { nEmbd: d, patchSize: p } = w.config;
  const size = img.size;
  const height = img.height ?? size;
  const side = size / p;
  const rows = height / p;
  const x = new Float32Array(side * rows * d);
  for (let py = 0; py < rows; py++) {
    for (let px = 0; px < side; px++) {
      const patch = py * side + px;
      for (let e = 0; e < d; e++) {
        let s = 0;
        for (let c = 0; c < 3; c++) {
          for (let ky = 0; ky < p; ky++) {
            const row = c * size * height + (py * p + ky) * size + px * p;
            const ko = ((e * 3 + c) * p + ky) * p;
            for (let kx = 0; kx < p; kx++) s += roundToF16(w.patchW[ko + kx]) * roundToF16(img.pixels[row + kx]);
          }
        }
        x[patch * d + e] = s + w.patchB[e] + posEmbd[patch * d + e];
      }
    }
  }
  return x;
}

/** Average pooling of `merge`² patches of the grid. x: [side², d] → [(side / merge)², d]. */
function averagePool(x: Float32Array, side: number, d: number, merge: number): Float32Array {
  const outSide = side / merge;
  const y = new Float32Array(outSide * outSide * d);
  for (let oy = 0; oy < outSide; oy++) {
    for (let ox = 0; ox < outSide; ox++) {
      const o = (oy * outSide + ox) * d;
      for (let e = 0; e < d; e++) {
        let s = 0;
        for (let ky = 0; ky < merge; ky++) {
          for (let kx = 0; kx < merge; kx++) s += x[((oy * merge + ky) * side + ox * merge + kx) * d + e];
        }
        y[o + e] = s / (merge * merge);
      }
    }
  }
  return y;
}

/** The MLP's activation in place (`ggml_gelu` tanh form, `ggml_gelu_quick`, `ggml_silu`). */
function activate(x: Float32Array, kind: VisionWeights['config']['ffn']): void {
  for (let i = 0; i < x.length; i++) {
    const u = x[i];
    if (kind === 'gelu') x[i] = 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));
    else x[i] = u / (1 + Math.exp(kind === 'silu' ? -u : -1.702 * u));
  }
}

/**
 * The ViT trunk shared by the projectors: patches (+ the class token, appended after them as llama.cpp's CLIP graph
 * does, when the file has one) → blocks → post-LN (when present). img: [3, height, size] →
 * [(height / patch) · (size / patch) (+ 1), d]; `posEmbd`: the position table resized to the patch grid
 * (dynamic-resolution encoders), else the file's; `layers`: blocks run (llava: `llava-features.ts`); `stack`: hidden
 * states concatenated per token instead of the output (0: after the pre-LN, k: after block k − 1; [n, d · stack]).
 */
export function encodeVit(
  w: VisionWeights,
  img: PreprocessedImage,
  signal?: AbortSignal,
  posEmbd: Float32Array = w.posEmbd,
  layers: number = w.layers.length,
  stack: readonly number[] = [],
): Float32Array {
  const { nEmbd: d, nFf: f, nHeads, headDim, eps, patchSize } = w.config;
  const nPatches = (img.size / patchSize) * ((img.height ?? img.size) / patchSize);
  let x = embedPatches(w, img, posEmbd);
  if (w.classEmbd !== undefined) {
    const withClass = new Float32Array((nPatches + 1) * d);
    withClass.set(x);
    for (let e = 0; e < d; e++) withClass[nPatches * d + e] = w.classEmbd[e] + posEmbd[nPatches * d + e];
    x = withClass;
  }
  const n = x.length / d;
  if (w.preLn !== undefined) x = layerNorm(x, n, d, w.preLn.w, w.preLn.b, eps);
  const states: Float32Array[] = [];
  for (const [il, L] of w.layers.slice(0, layers).entries()) {
    throwIfAborted(signal, 'encoding the image');
    if (stack.includes(il)) states.push(x.slice());
    const h = layerNorm(x, n, d, L.ln1W, L.ln1B, eps);
    const q = linear(h, n, d, L.qW, L.qB, d);
    const k = linear(h, n, d, L.kW, L.kB, d);
    const v = linear(h, n, d, L.vW, L.vB, d);
    const a = linear(attention(q, k, v, n, nHeads, headDim), n, d, L.oW, L.oB, d);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const up = linear(layerNorm(x, n, d, L.ln2W, L.ln2B, eps), n, d, L.upW, L.upB, f);
    activate(up, w.config.ffn);
    const down = linear(up, n, f, L.downW, L.downB, d);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
  }
  const out = w.postLn === undefined ? x : layerNorm(x, n, d, w.postLn.w, w.postLn.b, eps);
  if (stack.includes(layers)) states.push(out);
  return states.length === 0 ? out : concatRows(states, n, d);
}

/** The image's embeddings for the text model through the gemma3 projector: [nTokens, nEmbdText]. */
export function encodeImage(w: VisionWeights, img: PreprocessedImage, signal?: AbortSignal): Float32Array {
  const { nEmbd: d, eps, patchSize, merge } = w.config;
  const side = img.size / patchSize;
  const softEmbNormW = w.softEmbNormW!;
  const projW = w.projW!;
  const pooled = averagePool(encodeVit(w, img, signal), side, d, merge);
  const nTokens = pooled.length / d;
  const nOut = w.nEmbdText;
  const out = new Float32Array(nTokens * nOut);
  const normed = new Float64Array(d);
  for (let t = 0; t < nTokens; t++) {
    let ss = 0;
    for (let e = 0; e < d; e++) ss += pooled[t * d + e] ** 2;
    const inv = 1 / Math.sqrt(ss / d + eps);
    for (let e = 0; e < d; e++) normed[e] = pooled[t * d + e] * inv * softEmbNormW[e];
    for (let j = 0; j < nOut; j++) {
      let s = 0;
      for (let e = 0; e < d; e++) s += normed[e] * projW[e * nOut + j];
      out[t * nOut + j] = s;
    }
  }
  return out;
}
