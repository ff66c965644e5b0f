/**
 * A LayerNorm ViT (SigLIP, CLIP) and its projector on a backend (`Ops`: WASM, WebGPU or the cpu reference), the same
 * pass as the plain-TS oracle `siglip-encoder.ts` (llama.cpp `clip_graph::build_vit`):
 *   patch embedding as one GEMM over the picture's im2col rows (pixels rounded to f16, as ggml's F16 im2col) + bias
 *   (CLIP's class token appended after the patches) + learned position rows (`embed` by index, or lfm2's table resized
 *   to the picture's grid on the host) → pre-LN where the file has one →
 *   per block [LN1 → q, k, v (+bias) (→ pixtral's 2-D RoPE, on the host) → attention over every patch (non-causal, one KV layer reused by every block)
 *   → x += Wo·att + bo → LN2 → up (+bias) → GELU / quick-GELU / SiLU (pixtral: act(gate) × up) → x += down (+bias)]
 *   → post-LN where present (pixtral: RMSNorm throughout) →
 *   one read of [n, d] → the projector (`vit-ops-projectors.ts`: host permutations, backend matmuls).
 * Pictures may differ in size (dynamic resolution: lfm2): buffers grow to the largest picture seen.
 * One step per block, with a yield between them, so a long encode can be aborted.
 */

import type { Activation, AttentionParams, Ops, Projection, ResidualOptions } from '../backend/ops.js';
import { throwIfAborted } from '../errors.js';
import type { GgufFile } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { roundToF16 } from '../quant/half.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { resizePositions } from './projector-lfm2.js';
import { applyRope2d, pixtralRopeTable, type Rope2dTable } from './rope-2d-host.js';
import { layerTensorName, VISION_TENSORS } from './tensor-names.js';
import { concatRows, llavaFeatures } from './llava-features.js';
import type { VisionConfig } from './vision-config.js';
import { encodeGemma4vOps, type Gemma4vOpsContext } from './vit-ops-gemma4v.js';
import { VIT_OPS_HEADS } from './vit-ops-projectors.js';
import { encodeQwenVlOps } from './vit-ops-qwen.js';
import { loadVitWeights, type VitNorm, type VitWeights } from './vit-weights.js';

/** Lets timers and abort events run between blocks (a WASM block holds the thread for its whole duration). */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The picture's im2col rows: pixels [3, height, size] → [gh · gw, 3·p·p], row (py·gw + px) holding patch (py, px) in
 * (channel, ky, kx) order — the order of the kernel's rows — each value rounded to f16.
 */
export function im2colPatches(img: PreprocessedImage, p: number): Float32Array {
  const { size, pixels } = img;
  const height = img.height ?? size;
  const gw = size / p;
  const gh = height / p;
  const k = 3 * p * p;
  const out = new Float32Array(gw * gh * k);
  for (let py = 0; py < gh; py++) {
    for (let px = 0; px < gw; px++) {
      let o = (py * gw + px) * k;
      for (let c = 0; c < 3; c++) {
        for (let ky = 0; ky < p; ky++) {
          const row = c * size * height + (py * p + ky) * size + px * p;
          for (let kx = 0; kx < p; kx++) out[o++] = roundToF16(pixels[row + kx]!);
        }
      }
    }
  }
  return out;
}

/** The encoder on one backend. */
export class VitOpsEncoder {
  private readonly acts = new Map<string, Activation>();
  private positions = new Int32Array(0); // [capacity] 0, 1, 2, …: the index of each row
  private kvRows = 0;
  private readonly attention: AttentionParams;
  private readonly ctx: Gemma4vOpsContext;

  constructor(
    readonly ops: Ops,
    private readonly w: VitWeights,
    private readonly config: VisionConfig,
    readonly nEmbdText: number,
  ) {
    const { nHeads, headDim } = config;
    this.attention = {
      nHeads,
      nKvHeads: nHeads,
      headDim,
      scale: 1 / Math.sqrt(headDim),
      slidingWindow: 0,
      softcap: 0,
      causal: false,
    };
    this.ctx = {
      ops,
      w,
      config,
      nEmbdText,
      act: (l, r, c) => this.act(l, r, c),
      step: (r, positions) => this.step(r, positions),
      kv: (r) => this.kv(r),
      rotate: (q, k, r, table) => this.rotate(q, k, r, table),
      yieldNow: yieldToEventLoop,
      patchEmbed: (x, img, r) => this.patchEmbed(x, img, r),
      activate: (h, r) => this.activate(h, r),
      gated: (out, gate, up, r) => this.gated(out, gate, up, r),
    };
  }

  /**
   * An activation [≥ rows, cols] named `label`, re-created when a bigger picture needs more rows (the smaller one stays
   * allocated until `destroy`: `Ops` frees no single buffer; growth is bounded by the projector's largest picture).
   */
  private act(label: string, rows: number, cols: number): Activation {
    const have = this.acts.get(label);
    if (have && have.maxRows >= rows && have.cols === cols) return have;
    const a = this.ops.createActivation(`vit.${label}`, rows, cols);
    this.acts.set(label, a);
    return a;
  }

  private step(rows: number, positions?: Int32Array): void {
    if (this.positions.length < rows) this.positions = Int32Array.from({ length: rows }, (_, i) => i);
    this.ops.beginStep({
      tokens: this.positions.subarray(0, rows),
      startPos: 0,
      slot: 0,
      ...(positions && { positions }),
    });
  }

  /** Sizes the one KV layer for `n` rows: each block stores its k, v and attends over them before the next block. */
  private kv(n: number): void {
    if (n <= this.kvRows) return;
    const { nHeads, headDim } = this.config;
    this.ops.createKvCache({ nSlots: 1, contextLength: n, layers: [{ nKvHeads: nHeads, headDim }] });
    this.kvRows = n;
  }

  /** x [nPatches, d] = the picture's im2col rows · kernelᵀ (+ bias), in the open step. */
  private patchEmbed(x: Activation, img: PreprocessedImage, nPatches: number): void {
    const p = this.config.patchSize;
    const patchIn = this.act('patches', nPatches, 3 * p * p); // [nPatches, 3·p·p] im2col rows
    this.ops.setRows(patchIn, im2colPatches(img, p), nPatches);
    this.ops.matmul(x, patchIn, this.w.patch, nPatches, this.w.patchB);
  }

  /** The ViT's output for one picture: [gh · gw (+ 1 class row), d]. */
  private async trunk(img: PreprocessedImage, signal?: AbortSignal): Promise<Float32Array> {
    const { ops, w, config } = this;
    const { eps, nEmbd: d, nFf: f, patchSize: p } = config;
    const gw = img.size / p;
    const gh = (img.height ?? img.size) / p;
    const nPatches = gw * gh;
    const n = nPatches + (w.classEmbd ? 1 : 0);
    if (n > this.kvRows) {
      // One KV layer: each block stores its k, v and attends over them before the next block overwrites them.
      ops.createKvCache({
        nSlots: 1,
        contextLength: n,
        layers: [{ nKvHeads: config.nHeads, headDim: config.headDim }],
      });
      this.kvRows = n;
    }
    const x = this.act('x', n, d); // [n, d] residual stream
    const h = this.act('h', n, d); // [n, d] position rows, then each LayerNorm's output
    const scratch = this.act('scratch', n, d); // [n, d] residual products
    const [q, k, v, att] = ['q', 'k', 'v', 'att'].map((l) => this.act(l, n, d)); // [n, d] each
    const hidden = this.act('hidden', n, f); // [n, f]
    // pixtral's ViT normalises with RMSNorm (no bias) and rotates q, k by 2-D RoPE on the host; the others LayerNorm.
    const rms = config.rope2dTheta > 0;
    const ln = (out: Activation, src: Activation, norm: VitNorm) =>
      rms ? ops.rmsNorm(out, src, norm.w, eps, n) : ops.layerNorm(out, src, norm.w, norm.b, eps, n);
    const rope = rms ? pixtralRopeTable(gw, gh, config.headDim, config.rope2dTheta) : null;
    const residual = (bias: Projection['bias']): ResidualOptions => ({ bias, postNorm: null, scale: 1, scratch });

    this.step(n);
    this.patchEmbed(x, img, nPatches); // x [nPatches, d] = patches · kernelᵀ + b
    if (w.classEmbd) {
      const cls = this.act('class', 1, d);
      ops.setRows(cls, w.classEmbd, 1);
      ops.copyRows(x, cls, 0, 1, nPatches); // x[nPatches] = class token
    }
    if (w.posHost)
      ops.setRows(h, resizePositions(w.posHost, d, gw, gh), n); // lfm2: the table at this grid
    else if (w.pos) ops.embed(h, w.pos, n); // h [n, d] = position rows 0 … n−1
    if (w.posHost || w.pos) ops.add(x, x, h, n); // pixtral: positions by 2-D RoPE only
    if (w.preLn) ln(x, x, w.preLn);
    ops.endStep();
    // llava (mlp, ldp) runs all blocks but the last, or up to the deepest `clip.vision.feature_layer`.
    const llava = config.projector === 'mlp' || config.projector === 'ldp';
    const { blocks, stack } = llava ? llavaFeatures(config) : { blocks: w.layers.length, stack: [] };
    const states: Float32Array[] = []; // llava's stacked hidden states, [n, d] each
    for (const [il, L] of w.layers.slice(0, blocks).entries()) {
      if (stack.includes(il)) states.push(await ops.read(x, n));
      throwIfAborted(signal, 'encoding the image');
      await yieldToEventLoop();
      throwIfAborted(signal, 'encoding the image');
      this.step(n);
      ln(h, x, L.ln1); // h = LN1(x)
      const qkv: Projection[] = [
        { out: q!, weight: L.q, bias: L.qB },
        { out: k!, weight: L.k, bias: L.kB },
        { out: v!, weight: L.v, bias: L.vB },
      ];
      ops.normMatmul(scratch, h, null, qkv, n); // q, k, v [n, d]
      if (rope) await this.rotate(q!, k!, n, rope);
      ops.storeKv(0, k!, v!, n);
      ops.attention(att!, q!, 0, n, this.attention); // att [n, d], every patch sees every patch
      ops.matmulResidual(x, att!, L.o, n, residual(L.oB)); // x += att · Woᵀ + bo
      ln(h, x, L.ln2); // h = LN2(x)
      ops.matmul(hidden, h, L.up, n, L.upB); // hidden [n, f]
      let ffn = hidden;
      if (L.gate) {
        // Gated FFN (pixtral): act(h · gateᵀ) × up.
        const gate = this.act('gate', n, f);
        ffn = this.act('ffn', n, f);
        ops.matmul(gate, h, L.gate, n, L.gateB);
        this.gated(ffn, gate, hidden, n);
      } else this.activate(hidden, n);
      ops.matmulResidual(x, ffn, L.down, n, residual(L.downB)); // x += ffn · downᵀ + b
      ops.endStep();
    }
    throwIfAborted(signal, 'encoding the image');
    if (w.postLn) {
      this.step(n);
      ln(x, x, w.postLn);
      ops.endStep();
    }
    const out = await ops.read(x, n); // [n, d]
    if (stack.includes(blocks)) states.push(out);
    return states.length === 0 ? out : concatRows(states, n, d); // [n, d · stack]
  }

  /** 2-D RoPE of q and k ([n, d] each) on the host: ends the step, reads both, rotates, writes back in a new step. */
  private async rotate(q: Activation, k: Activation, n: number, table: Rope2dTable): Promise<void> {
    const { ops, config } = this;
    ops.endStep();
    const [hq, hk] = [await ops.read(q, n), await ops.read(k, n)];
    applyRope2d(hq, table, config.nHeads, config.headDim);
    applyRope2d(hk, table, config.nHeads, config.headDim);
    this.step(n);
    ops.setRows(q, hq, n);
    ops.setRows(k, hk, n);
  }

  /**
   * A gated FFN's out = act(gate) × up: `glu`'s SiLU or GELU; quick-GELU as SiLU of 1.702·gate ÷ 1.702
   * (g·σ(1.702g) = silu(1.702g) / 1.702), the gate scaled in place.
   */
  private gated(out: Activation, gate: Activation, up: Activation, n: number): void {
    const { ops, config } = this;
    if (config.ffn !== 'gelu-quick') {
      ops.glu(out, gate, up, n, config.ffn);
      return;
    }
    ops.scale(gate, 1.702, n);
    ops.glu(out, gate, up, n, 'silu');
    ops.scale(out, 1 / 1.702, n);
  }

  /** The FFN's activation in place: GELU (ggml's f16 table), quick-GELU x·σ(1.702x) or SiLU x·σ(x). */
  private activate(hidden: Activation, n: number): void {
    const { ops, config } = this;
    if (config.ffn === 'gelu') {
      ops.gelu(hidden, n);
      return;
    }
    const gate = this.act('gate', n, config.nFf); // [n, f]
    ops.copyRows(gate, hidden, 0, n);
    if (config.ffn === 'gelu-quick') ops.scale(gate, 1.702, n);
    ops.mulSigmoid(hidden, gate, n);
  }

  /** One picture's embeddings for the text model: [nTokens, nEmbdText]. */
  async encode(img: PreprocessedImage, signal?: AbortSignal): Promise<Float32Array> {
    if (this.config.projector === 'gemma4v') return encodeGemma4vOps(this.ctx, img, signal);
    if (this.config.mrope) return encodeQwenVlOps(this.ctx, img, signal);
    const vit = await this.trunk(img, signal);
    const p = this.config.patchSize;
    return VIT_OPS_HEADS[this.config.projector]!(this.ctx, vit, img.size / p, (img.height ?? img.size) / p);
  }

  /** Releases the backend. */
  destroy(): void {
    this.ops.destroy();
  }
}

/** Biases a Qwen2.5-VL RMS norm may carry (mtmd adds them); checked on the first block and the outer norms. */
const QWEN25VL_RMS_BIASES = [
  layerTensorName('ln1', 0, 'bias'),
  layerTensorName('ln2', 0, 'bias'),
  VISION_TENSORS.preLnBias,
  VISION_TENSORS.postLnBias,
];

/** Encoders with a pass of their own: gemma4v (`vit-ops-gemma4v.ts`), the Qwen-VL mergers (`vit-ops-qwen.ts`). */
const OWN_PASSES: ReadonlySet<string> = new Set(['gemma4v', 'qwen2.5vl_merger', 'qwen3vl_merger']);

/**
 * Whether `vit-ops.ts` runs this encoder: a projector of `VIT_OPS_HEADS` (LayerNorm ViTs, and pixtral's RMSNorm ViT)
 * or of `OWN_PASSES`; others take the TS reference, as does a Qwen2.5-VL file whose RMS norms have biases (`has`:
 * whether the file holds a tensor; none published has them, and `Ops.rmsNorm` adds none).
 */
export function vitOpsRuns(config: VisionConfig, has: (name: string) => boolean = () => false): boolean {
  if (config.projector === 'qwen2.5vl_merger' && QWEN25VL_RMS_BIASES.some(has)) return false;
  return config.projector in VIT_OPS_HEADS || OWN_PASSES.has(config.projector);
}

/**
 * Uploads the encoder in `gguf` to `ops` (which it then owns: `destroy` releases it, as does a failed load); buffers
 * are made for the first picture and grown for larger ones.
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
