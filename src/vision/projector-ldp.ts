/**
 * MobileVLM's LDP projector (llama.cpp `clip_graph_llava` for `PROJECTOR_TYPE_LDP`), after the llava CLIP trunk (all
 * blocks but the last, patch rows 1 … nPatches as for `mlp`): `mm.model.mlp.1` → GELU → `mm.model.mlp.3` on each of
 * the 24×24 patch rows (llama.cpp hard-codes the grid), then two MobileNet blocks over the [C, 24, 24] planes —
 * 3×3 depthwise conv (stride 1, then 2; padding 1; input rounded to f16 as ggml's F16 im2col) → LayerNorm over
 * channels → hardswish → squeeze-excite (global average → fc1 → ReLU → fc2 → hardsigmoid, times every plane) →
 * pointwise conv (a matmul) → LayerNorm; the first block adds its input back. Output: the 12×12 grid's rows,
 * [144, nEmbdText]. Plain TS, f64 sums: the reference, also run on the host after the backend's ViT.
 */

import { LlmError } from '../errors.js';
import { roundToF16 } from '../quant/half.js';
import { llavaWidth } from './llava-features.js';
import { matmulRows } from './pixel-shuffle.js';
import type { VisionConfig } from './vision-config.js';

/** llama.cpp's `TN_MVLM_PROJ_MLP` / `TN_MVLM_PROJ_BLOCK` names. */
const mlpName = (i: number, part: string) => `mm.model.mlp.${i}.${part}`;
const blockName = (b: number, i: number, part: string) => `mm.model.mb_block.${b}.block.${i}.${part}`;

/** The patch grid side llama.cpp's LDP graph assumes (336² pictures of 14² patches). */
const LDP_GRID = 24;

/** The tensor giving the output width: `mm.model.mlp.3.weight`, ggml [nEmbdText, nEmbdText]. */
export const LDP_OUTPUT = mlpName(3, 'weight');

/** The projector's tensors and their ggml shapes (the squeeze-excite width as the file has it). */
export function ldpTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  const side = config.imageSize / config.patchSize;
  if (side !== LDP_GRID) {
    throw new LlmError(
      'unsupported-arch',
      `mmproj projector 'ldp' needs a ${LDP_GRID}×${LDP_GRID} patch grid (llama.cpp's MobileVLM graph); this file's is ${side}×${side}`,
      { details: { projector: 'ldp', grid: side } },
    );
  }
  const t = nEmbdText;
  const out: Record<string, number[]> = {
    [mlpName(1, 'weight')]: [llavaWidth(config), t],
    [mlpName(1, 'bias')]: [t],
    [mlpName(3, 'weight')]: [t, t],
    [mlpName(3, 'bias')]: [t],
  };
  for (const b of [1, 2]) {
    const se = shapeOf(blockName(b, 1, 'fc1.weight'))?.[1] ?? 0;
    out[blockName(b, 0, '0.weight')] = [3, 3, 1, t];
    out[blockName(b, 0, '1.weight')] = [t];
    out[blockName(b, 0, '1.bias')] = [t];
    out[blockName(b, 1, 'fc1.weight')] = [t, se];
    out[blockName(b, 1, 'fc1.bias')] = [se];
    out[blockName(b, 1, 'fc2.weight')] = [se, t];
    out[blockName(b, 1, 'fc2.bias')] = [t];
    out[blockName(b, 2, '0.weight')] = [t, t];
    out[blockName(b, 2, '1.weight')] = [t];
    out[blockName(b, 2, '1.bias')] = [t];
  }
  return out;
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);
const hardSigmoid = (v: number) => Math.min(1, Math.max(0, (v + 3) / 6));

/** LayerNorm (eps) × w + b of each `c`-long row of x in place. */
function layerNormRows(x: Float32Array, c: number, w: Float32Array, b: Float32Array, eps: number): void {
  for (let o = 0; o < x.length; o += c) {
    let mean = 0;
    for (let i = 0; i < c; i++) mean += x[o + i]!;
    mean /= c;
    let v = 0;
    for (let i = 0; i < c; i++) v += (x[o + i]! - mean) ** 2;
    const inv = 1 / Math.sqrt(v / c + eps);
    for (let i = 0; i < c; i++) x[o + i] = (x[o + i]! - mean) * inv * w[i]! + b[i]!;
  }
}

/**
 * A matrix product of the projector: x [n, inDim] → x · Wᵀ (+ b) [n, outDim], W and b by llama.cpp name. The reference
 * multiplies on the host; the backend encoder (`vit-ops-projectors.ts`) on its backend.
 */
export type LdpLinear = (
  x: Float32Array,
  inDim: number,
  weight: string,
  outDim: number,
  bias?: string,
) => Float32Array | Promise<Float32Array>;

/** The names of the products `LdpLinear` computes (the rest of the projector runs on the host). */
export const isLdpMatrix = (name: string): boolean =>
  /^mm\.model\.(mlp\.[13]\.(weight|bias)|mb_block\.[12]\.block\.2\.0\.weight)$/.test(name);

/** One MobileNet block. x: [side², c] rows (position-major) → [(side / stride)², c]. */
async function mobileBlock(
  mm: Readonly<Record<string, Float32Array>>,
  linear: LdpLinear,
  blk: number,
  x: Float32Array,
  side: number,
  c: number,
  stride: number,
  eps: number,
): Promise<Float32Array> {
  const k = mm[blockName(blk, 0, '0.weight')]!; // [c, 3, 3]
  const os = Math.floor((side + 2 - 3) / stride) + 1;
  const y = new Float32Array(os * os * c); // [os², c]
  for (let oy = 0; oy < os; oy++) {
    for (let ox = 0; ox < os; ox++) {
      for (let ch = 0; ch < c; ch++) {
        let s = 0;
        for (let ky = 0; ky < 3; ky++) {
          const iy = oy * stride + ky - 1;
          if (iy < 0 || iy >= side) continue;
          for (let kx = 0; kx < 3; kx++) {
            const ix = ox * stride + kx - 1;
            if (ix < 0 || ix >= side) continue;
            s += k[ch * 9 + ky * 3 + kx]! * roundToF16(x[(iy * side + ix) * c + ch]!);
          }
        }
        y[(oy * os + ox) * c + ch] = s;
      }
    }
  }
  layerNormRows(y, c, mm[blockName(blk, 0, '1.weight')]!, mm[blockName(blk, 0, '1.bias')]!, eps);
  for (let i = 0; i < y.length; i++) y[i] = y[i]! * hardSigmoid(y[i]!); // hardswish
  // Squeeze-excite: the channels' means → fc1 → ReLU → fc2 → hardsigmoid, times every position.
  const mean = new Float32Array(c);
  for (let ch = 0; ch < c; ch++) {
    let s = 0;
    for (let p = 0; p < os * os; p++) s += y[p * c + ch]!;
    mean[ch] = s / (os * os);
  }
  const fc1 = mm[blockName(blk, 1, 'fc1.bias')]!;
  const squeezed = matmulRows(mean, c, mm[blockName(blk, 1, 'fc1.weight')]!, fc1.length, fc1);
  for (let i = 0; i < squeezed.length; i++) squeezed[i] = Math.max(0, squeezed[i]!);
  const gate = matmulRows(
    squeezed,
    fc1.length,
    mm[blockName(blk, 1, 'fc2.weight')]!,
    c,
    mm[blockName(blk, 1, 'fc2.bias')],
  );
  for (let p = 0; p < os * os; p++)
    for (let ch = 0; ch < c; ch++) y[p * c + ch] = y[p * c + ch]! * hardSigmoid(gate[ch]!);
  const z = await linear(y, c, blockName(blk, 2, '0.weight'), c); // pointwise conv
  layerNormRows(z, c, mm[blockName(blk, 2, '1.weight')]!, mm[blockName(blk, 2, '1.bias')]!, eps);
  return z;
}

/**
 * The image's embeddings. vit: [nPatches (+ 1), d] (the ViT's output; the class token last when `hasClass`) →
 * [(LDP_GRID / 2)², nEmbdText].
 */
export async function projectLdp(
  config: VisionConfig,
  mm: Readonly<Record<string, Float32Array>>,
  vit: Float32Array,
  nPatches: number,
  hasClass: boolean,
  nEmbdText: number,
  linear: LdpLinear = (x, inDim, weight, outDim, bias) =>
    matmulRows(x, inDim, mm[weight]!, outDim, bias === undefined ? undefined : mm[bias]),
): Promise<Float32Array> {
  const d = llavaWidth(config); // n_embd per stacked feature layer
  const t = nEmbdText;
  const rows = hasClass ? vit.subarray(d, (nPatches + 1) * d) : vit.subarray(0, nPatches * d);
  const h = await linear(rows, d, mlpName(1, 'weight'), t, mlpName(1, 'bias'));
  for (let i = 0; i < h.length; i++) {
    const u = h[i]!;
    h[i] = 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));
  }
  const x = await linear(h, t, mlpName(3, 'weight'), t, mlpName(3, 'bias')); // [576, t]
  const b1 = await mobileBlock(mm, linear, 1, x, LDP_GRID, t, 1, config.eps);
  for (let i = 0; i < b1.length; i++) b1[i] = b1[i]! + x[i]!; // residual
  return mobileBlock(mm, linear, 2, b1, LDP_GRID, t, 2, config.eps);
}
