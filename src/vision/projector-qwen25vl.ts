/**
 * Qwen2.5-VL (llama.cpp `clip_graph_qwen2vl` with `PROJECTOR_TYPE_QWEN25VL`, projector `qwen2.5vl_merger`) on the
 * plain-TS reference path:
 *   two patch kernels (a still image is both temporal frames: their convolutions summed), patches ordered in 2×2
 *   blocks (raster order of blocks, raster inside), then — with `clip.vision.n_wa_pattern` > 0 — the blocks regrouped
 *   window by window (112-pixel windows of merged tokens, mtmd's `window_idx`);
 *   per block: RMSNorm; q, k, v (biases); 2-D vision rope (`GGML_ROPE_TYPE_VISION`: pairs (i, i + hd/2), the first
 *   hd/4 pairs rotated by the patch's row, the next by its column, frequencies 10000^(−4j/hd) restarting per half);
 *   attention over every patch on each `n_wa_pattern`-th block, within its window on the others; o; residual;
 *   RMSNorm; SiLU(gate) × up (biases); down; residual;
 *   post RMSNorm (the merger's ln_q); each 2×2 block's 4 rows concatenated → mm.0 → GELU → mm.2; rows back in raster
 *   order of the merged grid. Output [(gw/2) · (gh/2), nEmbdText] and the grid the text model places it by.
 */

import { throwIfAborted } from '../errors.js';
import { matmulRows } from './pixel-shuffle.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { embedPatches, linear } from './siglip-encoder.js';
import type { VisionConfig } from './vision-config.js';
import type { VisionWeights } from './vision-weights.js';

/** llama.cpp's tensor names (`TN_PATCH_EMBD_1`, `TN_LLAVA_PROJ` 0 and 2). */
export const QWEN25VL_TENSORS = {
  /** ggml [patch, patch, 3, d]: the second temporal frame's kernel */
  patch1: 'v.patch_embd.weight.1',
  /** ggml [4d, hidden] */
  up: 'mm.0.weight',
  upB: 'mm.0.bias',
  /** ggml [hidden, nEmbdText] */
  down: 'mm.2.weight',
  downB: 'mm.2.bias',
} as const;

/** Window side in pixels (mtmd: `attn_window_size` is not read for this projector, so its default 112). */
const WINDOW_PIXELS = 112;

/** A window's side in merged tokens for patch size p (mtmd: 112 px / p / 2, at least 1). */
export const windowTokens = (p: number): number => Math.max(1, Math.floor(Math.floor(WINDOW_PIXELS / p) / 2));

/** The projector's tensors and their ggml shapes (the MLP's hidden width as the file has it). */
export function qwen25vlTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const T = QWEN25VL_TENSORS;
  const { nEmbd: d, patchSize: p } = config;
  const hidden = shapeOf(T.up)?.[1] ?? 0;
  return {
    [T.patch1]: [p, p, 3, d],
    [T.up]: [4 * d, hidden],
    [T.upB]: [hidden],
    [T.down]: [hidden, nEmbdText],
    [T.downB]: [nEmbdText],
  };
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

/**
 * The order of the merged blocks: `inv[dst]` is the block at row-group dst, `idx[src]` where block src went
 * (mtmd's inv_window_idx / window_idx), and `win[dst]` its window. Without windows: the identity, one window.
 */
export function windowOrder(
  pw: number,
  ph: number,
  gridWindow: number,
): { idx: Int32Array; inv: Int32Array; win: Int32Array } {
  const idx = new Int32Array(pw * ph);
  const inv = new Int32Array(pw * ph);
  const win = new Int32Array(pw * ph);
  let dst = 0;
  let w = 0;
  for (let y = 0; y < ph; y += gridWindow) {
    for (let x = 0; x < pw; x += gridWindow, w++) {
      for (let dy = 0; dy < Math.min(gridWindow, ph - y); dy++) {
        for (let dx = 0; dx < Math.min(gridWindow, pw - x); dx++) {
          const src = (y + dy) * pw + x + dx;
          idx[src] = dst;
          inv[dst] = src;
          win[dst++] = w;
        }
      }
    }
  }
  return { idx, inv, win };
}

/** Multi-head attention of rows that see only rows of their own window (`win` per row; null: every row). */
function attention(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  n: number,
  heads: number,
  hd: number,
  win: Int32Array | null,
): Float32Array {
  const d = heads * hd;
  const out = new Float32Array(n * d);
  const scores = new Float64Array(n);
  const scale = 1 / Math.sqrt(hd);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        if (win !== null && win[j] !== win[i]) {
          scores[j] = -Infinity;
          continue;
        }
        let s = 0;
        for (let c = 0; c < hd; c++) s += q[i * d + h * hd + c] * k[j * d + h * hd + c];
        scores[j] = s * scale;
        if (scores[j] > max) max = scores[j];
      }
      let sum = 0;
      for (let j = 0; j < n; j++) {
        scores[j] = scores[j] === -Infinity ? 0 : Math.exp(scores[j] - max);
        sum += scores[j];
      }
      for (let c = 0; c < hd; c++) {
        let acc = 0;
        for (let j = 0; j < n; j++) if (scores[j] !== 0) acc += scores[j] * v[j * d + h * hd + c];
        out[i * d + h * hd + c] = acc / sum;
      }
    }
  }
  return out;
}

/** The vision rope in place: row t at (ys[t], xs[t]); x: [n, heads · hd]. */
export function visionRope(x: Float32Array, ys: Int32Array, xs: Int32Array, heads: number, hd: number): void {
  const quarter = hd / 4;
  const half = hd / 2;
  const thetaScale = 10000 ** (-2 / half);
  for (let t = 0; t < ys.length; t++) {
    for (let h = 0; h < heads; h++) {
      const o = (t * heads + h) * hd;
      for (let i = 0; i < half; i++) {
        const theta = i < quarter ? ys[t] * thetaScale ** i : xs[t] * thetaScale ** (i - quarter);
        const c = Math.cos(theta);
        const s = Math.sin(theta);
        const a = x[o + i];
        const b = x[o + i + half];
        x[o + i] = a * c - b * s;
        x[o + i + half] = a * s + b * c;
      }
    }
  }
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** The picture's embeddings, [(gw/2) · (gh/2), nEmbdText] in raster order of the merged grid. */
export function encodeQwen25vl(w: VisionWeights, pic: PreprocessedImage, signal?: AbortSignal): Float32Array {
  const c = w.config;
  const { nEmbd: d, nFf: f, nHeads, headDim: hd, eps, patchSize: p } = c;
  const gw = pic.size / p;
  const gh = (pic.height ?? pic.size) / p;
  const [pw, ph] = [gw / 2, gh / 2];
  const n = gw * gh;
  const zeros = new Float32Array(n * d);
  const raster = embedPatches({ ...w, patchB: new Float32Array(d) }, pic, zeros); // [n, d] raster order
  const frame1 = embedPatches({ ...w, patchW: w.mm[QWEN25VL_TENSORS.patch1], patchB: new Float32Array(d) }, pic, zeros);
  const pattern = c.windowPattern ?? 0;
  const order = windowOrder(pw, ph, pattern > 0 ? windowTokens(p) : Math.max(pw, ph));
  // Rows in block order, blocks in window order: row 4·dst + k is patch k (raster in its 2×2 block) of block inv[dst].
  let x: Float32Array = new Float32Array(n * d); // [n, d]
  const ys = new Int32Array(n);
  const xs = new Int32Array(n);
  const win = new Int32Array(n);
  for (let dst = 0; dst < pw * ph; dst++) {
    const src = order.inv[dst];
    const [by, bx] = [Math.floor(src / pw), src % pw];
    for (let k = 0; k < 4; k++) {
      const [py, px] = [2 * by + (k >> 1), 2 * bx + (k & 1)];
      const r = 4 * dst + k;
      for (let e = 0; e < d; e++) x[r * d + e] = raster[(py * gw + px) * d + e] + frame1[(py * gw + px) * d + e];
      ys[r] = py;
      xs[r] = px;
      win[r] = order.win[dst];
    }
  }
  if (w.preLn !== undefined) x = rmsNorm(x, d, w.preLn.w, eps, w.preLn.b);
  w.layers.forEach((L, il) => {
    throwIfAborted(signal, 'encoding the image');
    const full = pattern > 0 ? (il + 1) % pattern === 0 : true;
    const h = rmsNorm(x, d, L.ln1W, eps, L.ln1B);
    const q = linear(h, n, d, L.qW, L.qB, d);
    const k = linear(h, n, d, L.kW, L.kB, d);
    const v = linear(h, n, d, L.vW, L.vB, d);
    visionRope(q, ys, xs, nHeads, hd);
    visionRope(k, ys, xs, nHeads, hd);
    const a = linear(attention(q, k, v, n, nHeads, hd, full ? null : win), n, d, L.oW, L.oB, d);
    for (let i = 0; i < x.length; i++) x[i] += a[i];
    const h2 = rmsNorm(x, d, L.ln2W, eps, L.ln2B);
    const up = linear(h2, n, d, L.upW, L.upB, f);
    const gate = L.gateW === undefined ? up : matmulRows(h2, d, L.gateW, f, L.gateB);
    for (let i = 0; i < up.length; i++) {
      const g = gate[i];
      const act =
        c.ffn === 'silu'
          ? g / (1 + Math.exp(-g))
          : c.ffn === 'gelu'
            ? 0.5 * g * (1 + Math.tanh(GELU_COEF * g * (1 + 0.044715 * g * g)))
            : g / (1 + Math.exp(-1.702 * g));
      up[i] = L.gateW === undefined ? act : act * up[i];
    }
    const down = linear(up, n, f, L.downW, L.downB, d);
    for (let i = 0; i < x.length; i++) x[i] += down[i];
  });
  if (w.postLn !== undefined) x = rmsNorm(x, d, w.postLn.w, eps, w.postLn.b);
  const T = QWEN25VL_TENSORS;
  const hidden = w.mm[T.up].length / (4 * d);
  const hid = matmulRows(x, 4 * d, w.mm[T.up], hidden, w.mm[T.upB]); // [n/4, hidden]: each block's 4 rows as one
  for (let i = 0; i < hid.length; i++) {
    const u = hid[i];
    hid[i] = 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));
  }
  const merged = matmulRows(hid, hidden, w.mm[T.down], w.nEmbdText, w.mm[T.downB]); // [n/4, nEmbdText] window order
  const nt = w.nEmbdText;
  const out = new Float32Array(pw * ph * nt);
  for (let src = 0; src < pw * ph; src++)
    out.set(merged.subarray(order.idx[src] * nt, (order.idx[src] + 1) * nt), src * nt);
  return out;
}
