/**
 * Qwen3-VL (llama.cpp `clip_graph_qwen3vl`, projector `qwen3vl_merger`) on the plain-TS reference path:
 *   two patch kernels summed, patches in 2×2-block order (as Qwen2.5-VL), + patch bias, + the learned position table
 *   resized to the patch grid (ggml bilinear with aligned corners) in the same order;
 *   per block: LayerNorm; fused QKV (bias); 2-D vision rope (`projector-qwen25vl.ts` `visionRope`); full attention;
 *   o; residual; LayerNorm; up → GELU → down (biases); residual; after a deepstack block, its merger: each 2×2
 *   block's rows concatenated → LayerNorm → fc1 → GELU → fc2;
 *   post-LN; the 2×2 merger mm.0 → GELU → mm.2; each token's row = [merger | deepstack mergers in block order].
 * Output [(gw/2) · (gh/2), nEmbdText · (1 + deepstack blocks)].
 */

import { throwIfAborted } from '../errors.js';
import { attention, embedPatches, linear } from './siglip-encoder.js';
import { matmulRows } from './pixel-shuffle.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { visionRope } from './projector-qwen25vl.js';
import type { VisionConfig } from './vision-config.js';
import type { VisionWeights } from './vision-weights.js';

/** llama.cpp's tensor names (`TN_PATCH_EMBD_1`, `TN_LLAVA_PROJ` 0 and 2, `TN_DEEPSTACK_*`). */
export const QWEN3VL_TENSORS = {
  patch1: 'v.patch_embd.weight.1',
  up: 'mm.0.weight',
  upB: 'mm.0.bias',
  down: 'mm.2.weight',
  downB: 'mm.2.bias',
  /** Per deepstack block il: `.weight` / `.bias` */
  dsNorm: 'v.deepstack.{il}.norm',
  dsFc1: 'v.deepstack.{il}.fc1',
  dsFc2: 'v.deepstack.{il}.fc2',
} as const;

const ds = (kind: 'dsNorm' | 'dsFc1' | 'dsFc2', il: number, part: 'weight' | 'bias') =>
  `${QWEN3VL_TENSORS[kind].replace('{il}', String(il))}.${part}`;

/** The blocks with a deepstack merger (those whose fc1 the file has), in order. */
function deepstackBlocks(nLayers: number, has: (name: string) => boolean): number[] {
  return Array.from({ length: nLayers }, (_, il) => il).filter((il) => has(ds('dsFc1', il, 'weight')));
}

/** The projector's tensors and their ggml shapes (hidden widths as the file has them). */
export function qwen3vlTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const T = QWEN3VL_TENSORS;
  const { nEmbd: d, patchSize: p } = config;
  const hidden = shapeOf(T.up)?.[1] ?? 0;
  const out: Record<string, number[]> = {
    [T.patch1]: [p, p, 3, d],
    [T.up]: [4 * d, hidden],
    [T.upB]: [hidden],
    [T.down]: [hidden, nEmbdText],
    [T.downB]: [nEmbdText],
  };
  for (const il of deepstackBlocks(config.nLayers, (n) => shapeOf(n) !== undefined)) {
    const h = shapeOf(ds('dsFc1', il, 'weight'))?.[1] ?? 0;
    Object.assign(out, {
      [ds('dsNorm', il, 'weight')]: [4 * d],
      [ds('dsNorm', il, 'bias')]: [4 * d],
      [ds('dsFc1', il, 'weight')]: [4 * d, h],
      [ds('dsFc1', il, 'bias')]: [h],
      [ds('dsFc2', il, 'weight')]: [h, nEmbdText],
      [ds('dsFc2', il, 'bias')]: [nEmbdText],
    });
  }
  return out;
}

/** LayerNorm × w + b of each row. x: [n, d] → new [n, d]. */
function layerNorm(x: Float32Array, d: number, w: Float32Array, b: Float32Array, eps: number): Float32Array {
  const y = new Float32Array(x.length);
  for (let o = 0; o < x.length; o += d) {
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

const GELU_COEF = Math.sqrt(2 / Math.PI);
const gelu = (x: Float32Array) => {
  for (let i = 0; i < x.length; i++) x[i] = 0.5 * x[i] * (1 + Math.tanh(GELU_COEF * x[i] * (1 + 0.044715 * x[i] ** 2)));
  return x;
};

/** ggml_interpolate bilinear with aligned corners of a [side², d] table to [gh · gw, d] (raster order). */
export function resizeTable(table: Float32Array, d: number, gw: number, gh: number): Float32Array {
  const side = Math.round(Math.sqrt(table.length / d));
  if (side === gw && side === gh) return table;
  const f = Math.fround;
  const sf0 = gw > 1 && side > 1 ? f((gw - 1) / (side - 1)) : f(gw / side);
  const sf1 = gh > 1 && side > 1 ? f((gh - 1) / (side - 1)) : f(gh / side);
  const out = new Float32Array(gw * gh * d);
  const clamp = (v: number) => Math.max(0, Math.min(v, side - 1));
  for (let i1 = 0; i1 < gh; i1++) {
    const y = f(i1 / sf1);
    const [y0, y1] = [clamp(Math.floor(y)), clamp(Math.floor(y) + 1)];
    const dy = Math.max(0, Math.min(f(y - y0), 1));
    for (let i0 = 0; i0 < gw; i0++) {
      const x = f(i0 / sf0);
      const [x0, x1] = [clamp(Math.floor(x)), clamp(Math.floor(x) + 1)];
      const dx = Math.max(0, Math.min(f(x - x0), 1));
      for (let e = 0; e < d; e++) {
        const at = (yy: number, xx: number) => table[(yy * side + xx) * d + e];
        out[(i1 * gw + i0) * d + e] =
          at(y0, x0) * (1 - dx) * (1 - dy) +
          at(y0, x1) * dx * (1 - dy) +
          at(y1, x0) * (1 - dx) * dy +
          at(y1, x1) * dx * dy;
      }
    }
  }
  return out;
}

/** Each 2×2 block's rows concatenated through a merger MLP: x [n, d] (block order) → [n/4, out]. */
function merge(
  x: Float32Array,
  d: number,
  up: Float32Array,
  upB: Float32Array,
  down: Float32Array,
  downB: Float32Array,
  out: number,
) {
  const hidden = up.length / (4 * d);
  return matmulRows(gelu(matmulRows(x, 4 * d, up, hidden, upB)), hidden, down, out, downB);
}

/** The picture's rows, [(gw/2) · (gh/2), nEmbdText · (1 + deepstack blocks)] in raster order of the merged grid. */
export function encodeQwen3vl(w: VisionWeights, pic: PreprocessedImage, signal?: AbortSignal): Float32Array {
  const c = w.config;
  const { nEmbd: d, nFf: f, nHeads, headDim: hd, eps, patchSize: p } = c;
  const gw = pic.size / p;
  const gh = (pic.height ?? pic.size) / p;
  const n = gw * gh;
  const zeros = new Float32Array(n * d);
  const frame0 = embedPatches(w, pic, zeros); // [n, d] raster, + patch bias
  const frame1 = embedPatches({ ...w, patchW: w.mm[QWEN3VL_TENSORS.patch1], patchB: new Float32Array(d) }, pic, zeros);
  const pos = resizeTable(w.posEmbd, d, gw, gh);
  let x: Float32Array = new Float32Array(n * d); // [n, d] in 2×2-block order
  const ys = new Int32Array(n);
  const xs = new Int32Array(n);
  for (let blk = 0; blk < n / 4; blk++) {
    const [by, bx] = [Math.floor(blk / (gw / 2)), blk % (gw / 2)];
    for (let k = 0; k < 4; k++) {
      const [py, px] = [2 * by + (k >> 1), 2 * bx + (k & 1)];
      const r = 4 * blk + k;
      const src = (py * gw + px) * d;
      for (let e = 0; e < d; e++) x[r * d + e] = frame0[src + e] + frame1[src + e] + pos[src + e];
      ys[r] = py;
      xs[r] = px;
    }
  }
  if (w.preLn !== undefined) x = layerNorm(x, d, w.preLn.w, w.preLn.b, eps);
  const stacks: Float32Array[] = [];
  w.layers.forEach((L, il) => {
    throwIfAborted(signal, 'encoding the image');
    const h = layerNorm(x, d, L.ln1W, L.ln1B, eps);
    const q = linear(h, n, d, L.qW, L.qB, d);
    const k = linear(h, n, d, L.kW, L.kB, d);
    const v = linear(h, n, d, L.vW, L.vB, d);
    visionRope(q, ys, xs, nHeads, hd);
    visionRope(k, ys, xs, nHeads, hd);
    const a = linear(attention(q, k, v, n, nHeads, hd), n, d, L.oW, L.oB, d);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const h2 = layerNorm(x, d, L.ln2W, L.ln2B, eps);
    const down = linear(gelu(linear(h2, n, d, L.upW, L.upB, f)), n, f, L.downW, L.downB, d);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
    const fc1 = w.mm[ds('dsFc1', il, 'weight')];
    if (fc1 !== undefined) {
      const normed = layerNorm(x, 4 * d, w.mm[ds('dsNorm', il, 'weight')], w.mm[ds('dsNorm', il, 'bias')], eps);
      const m = w.mm;
      stacks.push(
        merge(
          normed,
          d,
          fc1,
          m[ds('dsFc1', il, 'bias')],
          m[ds('dsFc2', il, 'weight')],
          m[ds('dsFc2', il, 'bias')],
          w.nEmbdText,
        ),
      );
    }
  });
  if (w.postLn !== undefined) x = layerNorm(x, d, w.postLn.w, w.postLn.b, eps);
  const T = QWEN3VL_TENSORS;
  const main = merge(x, d, w.mm[T.up], w.mm[T.upB], w.mm[T.down], w.mm[T.downB], w.nEmbdText);
  const nt = w.nEmbdText;
  const width = nt * (1 + stacks.length);
  const out = new Float32Array((n / 4) * width);
  for (let t = 0; t < n / 4; t++) {
    [main, ...stacks].forEach((part, j) => out.set(part.subarray(t * nt, (t + 1) * nt), t * width + j * nt));
  }
  return out;
}
