/**
 * The SigLIP ViT with the gemma3 projector on a backend (`Ops`: WASM, WebGPU or the cpu reference), the same pass as
 * the plain-TS oracle `siglip-encoder.ts` (llama.cpp `clip_graph_siglip`, `clip_graph::build_vit`):
 *   patch embedding as one GEMM over the image's im2col rows (pixels rounded to f16, as ggml's F16 im2col) + bias
 *   + learned position rows (`embed` by patch index) → pre-LN where the file has one →
 *   per block [LN1 → q, k, v (+bias) → attention over every patch (non-causal, one KV layer reused by every block)
 *   → x += Wo·att + bo → LN2 → up (+bias) → GELU → x += down (+bias)] → post-LN →
 *   `merge`² average pooling (on the host: one read of [nPatches, d]) → RMSNorm × soft_emb_norm → projection.
 * Output: [nTokens, nEmbdText] f32. One step per block, with a yield between them, so a long encode can be aborted.
 */

import type { Activation, AttentionParams, Ops, Projection, ResidualOptions } from '../backend/ops.js';
import { throwIfAborted } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { roundToF16 } from '../quant/half.js';
import type { PreprocessedImage } from './preprocess-image.js';
import type { VisionConfig } from './vision-config.js';
import { loadVitWeights, type VitNorm, type VitWeights } from './vit-weights.js';

/** Lets timers and abort events run between blocks (a WASM block holds the thread for its whole duration). */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The image's im2col rows: pixels [3, size, size] → [nPatches, 3·p·p], row (py·side + px) holding patch (py, px) in
 * (channel, ky, kx) order — the order of the kernel's rows — each value rounded to f16.
 */
function im2colPatches(img: PreprocessedImage, p: number): Float32Array {
  const { size, pixels } = img;
  const side = size / p;
  const k = 3 * p * p;
  const out = new Float32Array(side * side * k);
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      let o = (py * side + px) * k;
      for (let c = 0; c < 3; c++) {
        for (let ky = 0; ky < p; ky++) {
          const row = c * size * size + (py * p + ky) * size + px * p;
          for (let kx = 0; kx < p; kx++) out[o++] = roundToF16(pixels[row + kx]!);
        }
      }
    }
  }
  return out;
}

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

/** The encoder on one backend. */
export class VitOpsEncoder {
  private readonly nPatches: number;
  private readonly nTokens: number;
  private readonly positions: Int32Array; // [nPatches] 0, 1, 2, …: the patch index of each row
  private readonly patchIn: Activation; // [nPatches, 3·p·p] im2col rows
  private readonly x: Activation; // [nPatches, d] residual stream
  private readonly h: Activation; // [nPatches, d] position rows, then each LayerNorm's output
  private readonly scratch: Activation; // [nPatches, d] residual products
  private readonly q: Activation; // [nPatches, d]
  private readonly k: Activation; // [nPatches, d]
  private readonly v: Activation; // [nPatches, d]
  private readonly att: Activation; // [nPatches, d]
  private readonly hidden: Activation; // [nPatches, f]
  private readonly pooled: Activation; // [nTokens, d]
  private readonly out: Activation; // [nTokens, nEmbdText]
  private readonly attention: AttentionParams;

  constructor(
    readonly ops: Ops,
    private readonly w: VitWeights,
    private readonly config: VisionConfig,
    readonly nEmbdText: number,
  ) {
    const { nEmbd: d, nFf: f, patchSize: p, imageSize, merge, nHeads, headDim } = config;
    const side = imageSize / p;
    this.nPatches = side * side;
    this.nTokens = (side / merge) ** 2;
    const u = this.nPatches;
    this.positions = Int32Array.from({ length: u }, (_, i) => i);
    this.patchIn = ops.createActivation('vit.patches', u, 3 * p * p);
    this.x = ops.createActivation('vit.x', u, d);
    this.h = ops.createActivation('vit.h', u, d);
    this.scratch = ops.createActivation('vit.scratch', u, d);
    this.q = ops.createActivation('vit.q', u, d);
    this.k = ops.createActivation('vit.k', u, d);
    this.v = ops.createActivation('vit.v', u, d);
    this.att = ops.createActivation('vit.att', u, d);
    this.hidden = ops.createActivation('vit.hidden', u, f);
    this.pooled = ops.createActivation('vit.pooled', this.nTokens, d);
    this.out = ops.createActivation('vit.out', this.nTokens, nEmbdText);
    // One KV layer: each block stores its k, v and attends over them before the next block overwrites them.
    ops.createKvCache({ nSlots: 1, contextLength: u, layers: [{ nKvHeads: nHeads, headDim }] });
    this.attention = {
      nHeads,
      nKvHeads: nHeads,
      headDim,
      scale: 1 / Math.sqrt(headDim),
      slidingWindow: 0,
      softcap: 0,
      causal: false,
    };
  }

  /** The image's embeddings for the text model: [nTokens, nEmbdText]. */
  async encode(img: PreprocessedImage, signal?: AbortSignal): Promise<Float32Array> {
    const { ops, w, x, h, config } = this;
    const { eps, nEmbd: d, imageSize, patchSize, merge } = config;
    const n = this.nPatches;
    const step = (rows: number) => ops.beginStep({ tokens: this.positions.subarray(0, rows), startPos: 0, slot: 0 });
    const ln = (out: Activation, src: Activation, norm: VitNorm) => ops.layerNorm(out, src, norm.w, norm.b, eps, n);
    const residual = (bias: VitWeights['patchB']): ResidualOptions => ({
      bias,
      postNorm: null,
      scale: 1,
      scratch: this.scratch,
    });

    step(n);
    ops.setRows(this.patchIn, im2colPatches(img, patchSize), n); // patchIn [n, 3·p·p]
    ops.matmul(x, this.patchIn, w.patch, n, w.patchB); // x [n, d] = patches · kernelᵀ + b
    ops.embed(h, w.pos, n); // h [n, d] = position rows 0 … n−1
    ops.add(x, x, h, n);
    if (w.preLn) ln(x, x, w.preLn);
    ops.endStep();
    for (const L of w.layers) {
      throwIfAborted(signal, 'encoding the image');
      await yieldToEventLoop();
      throwIfAborted(signal, 'encoding the image');
      step(n);
      ln(h, x, L.ln1); // h = LN1(x)
      const qkv: Projection[] = [
        { out: this.q, weight: L.q, bias: L.qB },
        { out: this.k, weight: L.k, bias: L.kB },
        { out: this.v, weight: L.v, bias: L.vB },
      ];
      ops.normMatmul(this.scratch, h, null, qkv, n); // q, k, v [n, d]
      ops.storeKv(0, this.k, this.v, n);
      ops.attention(this.att, this.q, 0, n, this.attention); // att [n, d], every patch sees every patch
      ops.matmulResidual(x, this.att, L.o, n, residual(L.oB)); // x += att · Woᵀ + bo
      ln(h, x, L.ln2); // h = LN2(x)
      ops.matmul(this.hidden, h, L.up, n, L.upB); // hidden [n, f]
      ops.gelu(this.hidden, n);
      ops.matmulResidual(x, this.hidden, L.down, n, residual(L.downB)); // x += hidden · downᵀ + b
      ops.endStep();
    }
    throwIfAborted(signal, 'encoding the image');
    step(n);
    ln(x, x, w.postLn);
    ops.endStep();
    const hidden = await ops.read(x, n); // [n, d]
    const pooled = averagePool(hidden, imageSize / patchSize, d, merge); // [nTokens, d]
    const t = this.nTokens;
    step(t);
    ops.setRows(this.pooled, pooled, t);
    ops.rmsNorm(this.pooled, this.pooled, w.softEmbNorm, eps, t); // × soft_emb_norm
    ops.matmul(this.out, this.pooled, w.proj, t); // out [t, nEmbdText]
    ops.endStep();
    return ops.read(this.out, t);
  }

  /** Releases the backend. */
  destroy(): void {
    this.ops.destroy();
  }
}

/** Whether `vit-ops.ts` runs this encoder (the gemma3 projector after a GELU ViT); others take the TS reference. */
export function vitOpsRuns(config: VisionConfig): boolean {
  return config.projector === 'gemma3' && config.ffn === 'gelu';
}

/**
 * Uploads the encoder in `gguf` to `ops` (which it then owns: `destroy` releases it, as does a failed load) and plans
 * its buffers for the config's image size.
 */
export async function loadVitOps(
  gguf: GgufFile,
  source: ByteSource,
  ops: Ops,
  config: VisionConfig,
  nEmbdText: number,
  signal?: AbortSignal,
): Promise<VitOpsEncoder> {
  try {
    await ops.loadFeatureKernels?.(); // LayerNorm's WGSL is a feature kernel (src/backend/webgpu/feature-shaders.ts)
    const weights = await loadVitWeights(gguf, source, ops, config, nEmbdText, signal);
    return new VitOpsEncoder(ops, weights, config, nEmbdText);
  } catch (e) {
    ops.destroy();
    throw e;
  }
}
