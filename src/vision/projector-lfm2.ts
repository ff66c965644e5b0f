/**
 * The LFM2-VL projector (llama.cpp `clip_graph_siglip` for `PROJECTOR_TYPE_LFM2`): the ViT runs at the picture's own
 * patch grid, its learned position table resized to that grid first (`resize_position_embeddings`: ggml's
 * antialiased bilinear interpolation); then pixel unshuffle (`pixel-shuffle.ts`), an optional LayerNorm (eps 1e-5,
 * weight and bias each optional), and a two-layer MLP with GELU to the text model's width.
 */

import { matmulRows, pixelShuffle } from './pixel-shuffle.js';
import type { VisionConfig } from './vision-config.js';

/** llama.cpp's tensor names (`TN_MM_INP_NORM`, `TN_MM_INP_NORM_B`, `TN_LLAVA_PROJ`). */
export const LFM2_TENSORS = {
  normW: 'mm.input_norm.weight',
  normB: 'mm.input_norm.bias',
  /** ggml [d · merge², hidden] */
  up: 'mm.1.weight',
  upB: 'mm.1.bias',
  /** ggml [hidden, nEmbdText] */
  down: 'mm.2.weight',
  downB: 'mm.2.bias',
} as const;

/** The projector's tensors and their ggml shapes (the MLP's hidden width as the file has it; the norm optional). */
export function lfm2Tensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const inDim = config.nEmbd * config.merge * config.merge;
  const hidden = shapeOf(LFM2_TENSORS.up)?.[1] ?? 0;
  const T = LFM2_TENSORS;
  const out: Record<string, number[]> = {
    [T.up]: [inDim, hidden],
    [T.upB]: [hidden],
    [T.down]: [hidden, nEmbdText],
    [T.downB]: [nEmbdText],
  };
  if (shapeOf(T.normW)) out[T.normW] = [inDim];
  if (shapeOf(T.normB)) out[T.normB] = [inDim];
  return out;
}

/**
 * The position table resized to a `width` × `height` patch grid, as ggml's `ggml_interpolate` with
 * `GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS` (half-pixel centres, a triangle filter widened when
 * shrinking). pos: [side², d] → [height · width, d]; the table itself when the grid is its own.
 */
export function resizePositions(pos: Float32Array, d: number, width: number, height: number): Float32Array {
  const side = Math.round(Math.sqrt(pos.length / d));
  if (width === side && height === side) return pos;
  const f = Math.fround;
  const axis = (n: number) => {
    const sf = f(n / side);
    const support = Math.max(1, f(1 / sf));
    return { sf, support, inv: f(1 / support) };
  };
  const ax = axis(width);
  const ay = axis(height);
  const tri = (v: number) => Math.max(1 - Math.abs(v), 0);
  const out = new Float32Array(width * height * d);
  const acc = new Float64Array(d);
  for (let i1 = 0; i1 < height; i1++) {
    const y = f(f(i1 + 0.5) / ay.sf);
    const y0 = Math.max(Math.trunc(y - ay.support + 0.5), 0);
    const y1 = Math.min(Math.trunc(y + ay.support + 0.5), side);
    for (let i0 = 0; i0 < width; i0++) {
      const x = f(f(i0 + 0.5) / ax.sf);
      const x0 = Math.max(Math.trunc(x - ax.support + 0.5), 0);
      const x1 = Math.min(Math.trunc(x + ax.support + 0.5), side);
      acc.fill(0);
      let total = 0;
      for (let sy = y0; sy < y1; sy++) {
        const wy = f(tri(f(f(sy - y + 0.5) * ay.inv)));
        for (let sx = x0; sx < x1; sx++) {
          const wgt = f(f(tri(f(f(sx - x + 0.5) * ax.inv))) * wy);
          if (wgt <= 0) continue;
          const o = (sy * side + sx) * d;
          for (let e = 0; e < d; e++) acc[e] += pos[o + e] * wgt;
          total += wgt;
        }
      }
      const o = (i1 * width + i0) * d;
      for (let e = 0; e < d; e++) out[o + e] = total > 0 ? acc[e] / total : acc[e];
    }
  }
  return out;
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** The picture's embeddings. vit: [height · width, d] (the ViT's output) → [(height / merge) · (width / merge), nEmbdText]. */
export function projectLfm2(
  config: VisionConfig,
  mm: Readonly<Record<string, Float32Array>>,
  vit: Float32Array,
  width: number,
  height: number,
  nEmbdText: number,
): Float32Array {
  const { nEmbd: d, merge: s } = config;
  const T = LFM2_TENSORS;
  const inDim = d * s * s;
  const x = pixelShuffle(vit, width, height, d, s);
  const normW = mm[T.normW];
  const normB = mm[T.normB];
  if (normW !== undefined || normB !== undefined) {
    for (let o = 0; o < x.length; o += inDim) {
      let mean = 0;
      if (normW !== undefined) {
        for (let i = 0; i < inDim; i++) mean += x[o + i];
        mean /= inDim;
        let v = 0;
        for (let i = 0; i < inDim; i++) v += (x[o + i] - mean) ** 2;
        const inv = 1 / Math.sqrt(v / inDim + 1e-5);
        for (let i = 0; i < inDim; i++) x[o + i] = (x[o + i] - mean) * inv * normW[i];
      }
      if (normB !== undefined) for (let i = 0; i < inDim; i++) x[o + i] += normB[i];
    }
  }
  const hidden = mm[T.upB].length;
  const h = matmulRows(x, inDim, mm[T.up], hidden, mm[T.upB]);
  for (let i = 0; i < h.length; i++) {
    const u = h[i];
    h[i] = 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));
  }
  return matmulRows(h, hidden, mm[T.down], nEmbdText, mm[T.downB]);
}
