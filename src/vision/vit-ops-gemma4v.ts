/**
 * Gemma 4 vision on a backend (`vit-ops.ts`), the same pass as the plain-TS oracle `projector-gemma4v.ts` (llama.cpp
 * `clip_graph_gemma4v`): pixels mapped to [−1, 1] and the patch GEMM (no bias); the column and row position tables
 * summed on the host; per block RMSNorm → clippable q, k, v (`Ops.clamp` on the input and the product where the file
 * has the scalars) → per-head Q/K RMS norms, V RMS-normalised per head → NeoX 2-D RoPE on the host → attention with
 * scale 1 → clippable o → post-attention norm → residual; RMSNorm → clippable gate and up → act(gate) × up →
 * clippable down → post-FFN norm → residual → × the block's output scale; then one read of [n, d], merge² average
 * pooling × √d, the standardisation and the RMSNorm on the host, and the clippable projection on the backend.
 * Biases (none in published files) are added before a product's output clamp, not after as llama.cpp does.
 */

import type { Activation, Weight } from '../backend/ops.js';
import { throwIfAborted } from '../errors.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { GEMMA4V_TENSORS, gemma4vPositions } from './projector-gemma4v.js';
import { gemma4vRopeTable, type Rope2dTable } from './rope-2d-host.js';
import { layerTensorName, type VISION_LAYER_TENSORS } from './tensor-names.js';
import type { VitOpsContext } from './vit-ops-projectors.js';

/** What the gemma4v pass needs of the encoder beyond the projector heads' context. */
export interface Gemma4vOpsContext extends VitOpsContext {
  /** Sizes the one KV layer for `n` rows. */
  kv(n: number): void;
  /** 2-D RoPE of q and k ([n, d] each) on the host, between two steps. */
  rotate(q: Activation, k: Activation, n: number, table: Rope2dTable): Promise<void>;
  /** Lets the event loop run between blocks. */
  yieldNow(): Promise<void>;
  /** x [nPatches, d] = the picture's patches · kernelᵀ (+ bias), in the open step. */
  patchEmbed(x: Activation, img: PreprocessedImage, nPatches: number): void;
  /** The sequential FFN's activation in place. */
  activate(hidden: Activation, n: number): void;
  /** A gated FFN's out = act(gate) × up (the gate may be overwritten). */
  gated(out: Activation, gate: Activation, up: Activation, n: number): void;
}

const CLAMPS = ['input_min', 'input_max', 'output_min', 'output_max'] as const;

/** Largest finite f32: the bound of a missing clamp scalar (llama.cpp's FLT_MAX). */
const F32_MAX = 3.4028234663852886e38;

/** The picture's embeddings: [(gh / merge) · (gw / merge), nEmbdText]. */
export async function encodeGemma4vOps(
  c: Gemma4vOpsContext,
  img: PreprocessedImage,
  signal?: AbortSignal,
): Promise<Float32Array> {
  const { ops, w, config } = c;
  const { nEmbd: d, nFf: f, nHeads, headDim: hd, eps, patchSize: p, merge: m } = config;
  const T = GEMMA4V_TENSORS;
  const gw = img.size / p;
  const gh = (img.height ?? img.size) / p;
  const n = gw * gh;
  c.kv(n);
  const [x, h, scratch, q, k, v, att] = ['x', 'h', 'scratch', 'q', 'k', 'v', 'att'].map((l) => c.act(l, n, d));
  const [hidden, gate, ffn] = ['hidden', 'gate', 'ffn'].map((l) => c.act(l, n, f));
  /** out = clamp(clamp(src) · Wᵀ (+ b)) with the scalars the file gives `name` (Gemma4ClippableLinear). */
  const linear = (
    out: Activation,
    src: Activation,
    weight: Weight,
    name: string,
    rows: number,
    bias?: Weight | null,
  ) => {
    const [inMin, inMax, outMin, outMax] = CLAMPS.map((s) => w.mmHost[name.replace(/weight$/, s)]?.[0]);
    let input = src;
    if (inMin !== undefined || inMax !== undefined) {
      const clampIn = c.act(`clamp.${src.cols}`, rows, src.cols); // [rows, src.cols] the clamped input
      ops.copyRows(clampIn, src, 0, rows);
      ops.clamp(clampIn, inMin ?? -F32_MAX, inMax ?? F32_MAX, rows);
      input = clampIn;
    }
    ops.matmul(out, input, weight, rows, bias ?? null);
    if (outMin !== undefined || outMax !== undefined) ops.clamp(out, outMin ?? -F32_MAX, outMax ?? F32_MAX, rows);
  };
  const name = (kind: keyof typeof VISION_LAYER_TENSORS, il: number) => layerTensorName(kind, il, 'weight');

  // ggml_scale_bias(inp_raw, 2, −1) in f32, then the patch conv; the position tables by column and row.
  const scaled = { ...img, pixels: img.pixels.map((v) => Math.fround(Math.fround(v * 2) - 1)) };
  const pos = gemma4vPositions(w.mmHost[T.positions]!, d, gw, gh); // [n, d]
  const rope = gemma4vRopeTable(gw, gh, hd, config.rope2dTheta);
  c.step(n);
  c.patchEmbed(x, scaled, n);
  ops.setRows(h, pos, n);
  ops.add(x, x, h, n);
  ops.endStep();
  const attention = { nHeads, nKvHeads: nHeads, headDim: hd, scale: 1, slidingWindow: 0, softcap: 0, causal: false };
  for (const [il, L] of w.layers.entries()) {
    throwIfAborted(signal, 'encoding the image');
    await c.yieldNow();
    throwIfAborted(signal, 'encoding the image');
    c.step(n);
    ops.rmsNorm(h, x, L.ln1.w, eps, n);
    linear(q!, h!, L.q, name('attnQ', il), n, L.qB);
    linear(k!, h!, L.k, name('attnK', il), n, L.kB);
    linear(v!, h!, L.v, name('attnV', il), n, L.vB);
    for (const [t, norm] of [
      [q!, w.mm[name('attnQNorm', il)]],
      [k!, w.mm[name('attnKNorm', il)]],
    ] as const) {
      if (norm) ops.rmsNorm(t, t, norm, eps, n, norm.rowLength);
    }
    ops.rmsNorm(v!, v!, null, eps, n, hd);
    await c.rotate(q!, k!, n, rope);
    ops.storeKv(0, k!, v!, n);
    ops.attention(att!, q!, 0, n, attention);
    linear(scratch!, att!, L.o, name('attnOut', il), n, L.oB);
    const attnPost = w.mm[name('attnPostNorm', il)];
    if (attnPost) ops.rmsNorm(scratch!, scratch!, attnPost, eps, n);
    ops.add(x!, x!, scratch!, n);
    ops.rmsNorm(h, x, L.ln2.w, eps, n);
    linear(hidden!, h!, L.up, name('ffnUp', il), n, L.upB);
    let act = hidden!;
    if (L.gate) {
      linear(gate!, h!, L.gate, name('ffnGate', il), n);
      c.gated(ffn!, gate!, hidden!, n);
      act = ffn!;
    } else c.activate(hidden!, n);
    linear(scratch!, act, L.down, name('ffnDown', il), n, L.downB);
    const ffnPost = w.mm[name('ffnPostNorm', il)];
    if (ffnPost) ops.rmsNorm(scratch!, scratch!, ffnPost, eps, n);
    ops.add(x!, x!, scratch!, n);
    const outScale = w.mmHost[name('outScale', il)]?.[0];
    if (outScale !== undefined) ops.scale(x!, outScale, n);
    ops.endStep();
  }
  throwIfAborted(signal, 'encoding the image');
  if (w.postLn) {
    c.step(n);
    ops.rmsNorm(x!, x!, w.postLn.w, eps, n);
    ops.endStep();
  }
  const vit = await ops.read(x!, n); // [n, d]
  // Average pooling of merge² patches × √d, the optional standardisation, RMSNorm (no weight).
  const [ox, oy] = [gw / m, gh / m];
  const t = ox * oy;
  const pooled = new Float32Array(t * d);
  const root = Math.sqrt(d);
  const acc = new Float64Array(d);
  const std = [w.mmHost[T.stdBias], w.mmHost[T.stdScale]] as const;
  for (let by = 0; by < oy; by++) {
    for (let bx = 0; bx < ox; bx++) {
      acc.fill(0);
      for (let ky = 0; ky < m; ky++) {
        for (let kx = 0; kx < m; kx++) {
          const o = ((by * m + ky) * gw + bx * m + kx) * d;
          for (let e = 0; e < d; e++) acc[e] = acc[e]! + vit[o + e]!;
        }
      }
      const o = (by * ox + bx) * d;
      for (let e = 0; e < d; e++) {
        const s = (acc[e]! / (m * m)) * root;
        pooled[o + e] = std[0] && std[1] ? (s - std[0][e]!) * std[1][e]! : s;
      }
    }
  }
  const input = c.act('proj.in', t, d); // [t, d]
  const out = c.act('proj.out', t, c.nEmbdText); // [t, nEmbdText]
  c.step(t);
  ops.setRows(input, pooled, t);
  ops.rmsNorm(input, input, null, eps, t);
  linear(out, input, w.mm[T.proj]!, T.proj, t);
  ops.endStep();
  return ops.read(out, t);
}
