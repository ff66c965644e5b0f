/**
 * Gemma 4 vision (llama.cpp `clip_graph_gemma4v`, projector `gemma4v`): pixels mapped to [−1, 1], the patch conv
 * (no bias) plus a column table and a row table of position embeddings; RMSNorm blocks with per-head Q/K norms, 2-D
 * NeoX RoPE (the first half of each head by column, the second by row, base 100), the values RMS-normalised per head,
 * attention scale 1, post-attention and post-FFN norms, a gated FFN and a scalar output scale per block; every matrix
 * product clamped to the file's `.input_min/max` / `.output_min/max` scalars where present (Gemma4ClippableLinear);
 * then merge² average pooling × √d, the optional standardisation, RMSNorm and the projection to the text width.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { attention, embedPatches } from './siglip-encoder.js';
import { layerTensorName, type VISION_LAYER_TENSORS } from './tensor-names.js';
import type { VisionConfig } from './vision-config.js';
import type { VisionWeights } from './vision-weights.js';

/** llama.cpp's tensor names (`TN_POS_EMBD`, `TN_STD_BIAS`, `TN_STD_SCALE`, `TN_MM_INP_PROJ`). */
export const GEMMA4V_TENSORS = {
  /** ggml [d, posSize, 2]: column table, then row table */
  positions: 'v.position_embd.weight',
  stdBias: 'v.std_bias',
  stdScale: 'v.std_scale',
  /** ggml [d, nEmbdText] */
  proj: 'mm.input_projection.weight',
} as const;

/** Per-layer tensors beyond the trunk's, each optional. */
const EXTRA_LAYER = ['attnQNorm', 'attnKNorm', 'attnPostNorm', 'ffnPostNorm', 'outScale'] as const;
/**
 * The learned position rows of a gw × gh patch grid: column table row + row table row per patch. table: ggml
 * [d, posSize, 2] → [gw · gh, d]. A grid wider or taller than the tables is `invalid-request` (llama.cpp's get_rows
 * asserts there).
 */
export function gemma4vPositions(table: Float32Array, d: number, gw: number, gh: number): Float32Array {
  const posSize = table.length / (2 * d);
  if (gw > posSize || gh > posSize) {
    throw new LlmError(
      'invalid-request',
      `the image's ${gw}×${gh} patch grid exceeds the gemma4v position tables (${posSize} a side, '${GEMMA4V_TENSORS.positions}'): its aspect ratio is too extreme for this mmproj`,
      { details: { gridWidth: gw, gridHeight: gh, positions: posSize } },
    );
  }
  const pos = new Float32Array(gw * gh * d);
  for (let t = 0; t < gw * gh; t++) {
    const cx = (t % gw) * d;
    const cy = (posSize + Math.floor(t / gw)) * d;
    for (let e = 0; e < d; e++) pos[t * d + e] = table[cx + e] + table[cy + e];
  }
  return pos;
}

/** The matrices Gemma4ClippableLinear may clamp. */
const CLAMPED_LAYER = ['attnQ', 'attnK', 'attnV', 'attnOut', 'ffnUp', 'ffnGate', 'ffnDown'] as const;
const CLAMPS = ['input_min', 'input_max', 'output_min', 'output_max'] as const;

/** The projector's tensors and their ggml shapes (optional ones as the file has them). */
export function gemma4vTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const T = GEMMA4V_TENSORS;
  const d = config.nEmbd;
  const out: Record<string, number[]> = {
    [T.positions]: [d, shapeOf(T.positions)?.[1] ?? 0, 2],
    [T.proj]: [d, nEmbdText],
  };
  if (shapeOf(T.stdBias) && shapeOf(T.stdScale)) {
    out[T.stdBias] = [d];
    out[T.stdScale] = [d];
  }
  const optional = (name: string) => {
    const shape = shapeOf(name);
    if (shape) out[name] = [...shape];
  };
  const matrices: string[] = [T.proj];
  for (let il = 0; il < config.nLayers; il++) {
    for (const k of EXTRA_LAYER) optional(layerTensorName(k, il, 'weight'));
    for (const k of CLAMPED_LAYER) matrices.push(layerTensorName(k, il, 'weight'));
  }
  for (const m of matrices) for (const c of CLAMPS) optional(m.replace(/weight$/, c));
  return out;
}

/** RMS norm of each `len`-long run of `x` in place, times `w` when given. */
function rmsRuns(x: Float32Array, len: number, eps: number, w?: Float32Array): void {
  for (let o = 0; o < x.length; o += len) {
    let ss = 0;
    for (let i = 0; i < len; i++) ss += x[o + i] ** 2;
    const inv = 1 / Math.sqrt(ss / len + eps);
    for (let i = 0; i < len; i++) x[o + i] = x[o + i] * inv * (w === undefined ? 1 : w[i]);
  }
}

/** A clippable linear layer: W·clamp(x) clamped, + b. x: [n, inDim], W: [outDim, inDim] → [n, outDim]. */
function clippedLinear(
  mm: Readonly<Record<string, Float32Array>>,
  name: string,
  x: Float32Array,
  inDim: number,
  w: Float32Array,
  outDim: number,
  b?: Float32Array,
): Float32Array {
  const lim = (c: (typeof CLAMPS)[number], dflt: number) => mm[name.replace(/weight$/, c)]?.[0] ?? dflt;
  const [inMin, inMax, outMin, outMax] = [
    lim('input_min', -Infinity),
    lim('input_max', Infinity),
    lim('output_min', -Infinity),
    lim('output_max', Infinity),
  ];
  const n = x.length / inDim;
  const y = new Float32Array(n * outDim);
  const row = new Float64Array(inDim);
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < inDim; i++) row[i] = Math.min(Math.max(x[t * inDim + i], inMin), inMax);
    for (let j = 0; j < outDim; j++) {
      let s = 0;
      for (let i = 0; i < inDim; i++) s += w[j * inDim + i] * row[i];
      y[t * outDim + j] = Math.min(Math.max(s, outMin), outMax) + (b === undefined ? 0 : b[j]);
    }
  }
  return y;
}

/** 2-D NeoX RoPE in place: in each head, dims [0, hd/2) by column, [hd/2, hd) by row. x: [n, heads · hd]. */
function rope2dNeox(x: Float32Array, cols: number, heads: number, hd: number, base: number): void {
  const half = hd / 2;
  const quarter = half / 2;
  const n = x.length / (heads * hd);
  for (let t = 0; t < n; t++) {
    const pos = [t % cols, Math.floor(t / cols)];
    for (let h = 0; h < heads; h++) {
      for (let part = 0; part < 2; part++) {
        const o = (t * heads + h) * hd + part * half;
        for (let j = 0; j < quarter; j++) {
          const theta = pos[part] * base ** ((-2 * j) / half);
          const c = Math.cos(theta);
          const s = Math.sin(theta);
          const a = x[o + j];
          const b = x[o + j + quarter];
          x[o + j] = a * c - b * s;
          x[o + j + quarter] = a * s + b * c;
        }
      }
    }
  }
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** The picture's embeddings: [(gh / merge) · (gw / merge), nEmbdText]. */
export function encodeGemma4v(w: VisionWeights, pic: PreprocessedImage, signal?: AbortSignal): Float32Array {
  const c = w.config;
  const { nEmbd: d, nFf: f, nHeads, headDim: hd, eps, patchSize: p, merge: m } = c;
  const mm = w.mm;
  const T = GEMMA4V_TENSORS;
  const gw = pic.size / p;
  const gh = (pic.height ?? pic.size) / p;
  const n = gw * gh;
  // ggml_scale_bias(inp_raw, 2, −1) in f32 before the conv.
  const scaled = pic.pixels.map((v) => Math.fround(Math.fround(v * 2) - 1));
  let x = embedPatches(w, { ...pic, pixels: scaled }, new Float32Array(n * d));
  const pos = gemma4vPositions(mm[T.positions], d, gw, gh);
  for (let i = 0; i < n * d; i++) x[i] += pos[i];
  const name = (k: keyof typeof VISION_LAYER_TENSORS, il: number) => layerTensorName(k, il, 'weight');
  w.layers.forEach((L, il) => {
    throwIfAborted(signal, 'encoding the image');
    const h = x.slice();
    rmsRuns(h, d, eps, L.ln1W);
    const q = clippedLinear(mm, name('attnQ', il), h, d, L.qW, d, L.qB);
    const k = clippedLinear(mm, name('attnK', il), h, d, L.kW, d, L.kB);
    const v = clippedLinear(mm, name('attnV', il), h, d, L.vW, d, L.vB);
    for (const [t, normName] of [
      [q, name('attnQNorm', il)],
      [k, name('attnKNorm', il)],
    ] as const) {
      const nw = mm[normName];
      if (nw !== undefined) rmsRuns(t, nw.length, eps, nw);
    }
    rope2dNeox(q, gw, nHeads, hd, c.rope2dTheta);
    rope2dNeox(k, gw, nHeads, hd, c.rope2dTheta);
    rmsRuns(v, hd, eps);
    // attention() scales scores by 1/√hd; gemma4v uses scale 1: pre-scale q by √hd.
    const sq = Math.sqrt(hd);
    for (let i = 0; i < q.length; i++) q[i] *= sq;
    const a = clippedLinear(mm, name('attnOut', il), attention(q, k, v, n, nHeads, hd), d, L.oW, d, L.oB);
    if (mm[name('attnPostNorm', il)] !== undefined) rmsRuns(a, d, eps, mm[name('attnPostNorm', il)]);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const h2 = x.slice();
    rmsRuns(h2, d, eps, L.ln2W);
    const up = clippedLinear(mm, name('ffnUp', il), h2, d, L.upW, f, L.upB);
    const gate = L.gateW === undefined ? up : clippedLinear(mm, name('ffnGate', il), h2, d, L.gateW, f);
    for (let i = 0; i < up.length; i++) {
      const g = gate[i];
      const act =
        c.ffn === 'gelu'
          ? 0.5 * g * (1 + Math.tanh(GELU_COEF * g * (1 + 0.044715 * g * g)))
          : g / (1 + Math.exp(c.ffn === 'silu' ? -g : -1.702 * g));
      up[i] = L.gateW === undefined ? act : act * up[i];
    }
    const down = clippedLinear(mm, name('ffnDown', il), up, f, L.downW, d, L.downB);
    if (mm[name('ffnPostNorm', il)] !== undefined) rmsRuns(down, d, eps, mm[name('ffnPostNorm', il)]);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
    const scale = mm[name('outScale', il)]?.[0];
    if (scale !== undefined) for (let i = 0; i < x.length; i++) x[i] *= scale;
  });
  if (w.postLn !== undefined) rmsRuns(x, d, eps, w.postLn.w);
  // Average pooling of merge² patches, × √d.
  const ox = gw / m;
  const oy = gh / m;
  const pooled = new Float32Array(ox * oy * d);
  const root = Math.sqrt(d);
  for (let by = 0; by < oy; by++) {
    for (let bx = 0; bx < ox; bx++) {
      for (let e = 0; e < d; e++) {
        let s = 0;
        for (let ky = 0; ky < m; ky++)
          for (let kx = 0; kx < m; kx++) s += x[((by * m + ky) * gw + bx * m + kx) * d + e];
        pooled[(by * ox + bx) * d + e] = (s / (m * m)) * root;
      }
    }
  }
  x = pooled;
  if (mm[T.stdBias] !== undefined) {
    for (let i = 0; i < x.length; i++) x[i] = (x[i] - mm[T.stdBias][i % d]) * mm[T.stdScale][i % d];
  }
  rmsRuns(x, d, eps);
  return clippedLinear(mm, T.proj, x, d, mm[T.proj], w.nEmbdText);
}
