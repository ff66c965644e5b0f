/**
 * The Idefics3 / SmolVLM projector (llama.cpp `clip_graph_siglip` for `PROJECTOR_TYPE_IDEFICS3`,
 * `clip_graph::build_patch_merge_permute` then `build_mm(mm.model.fc.weight)`): the ViT's patch grid is pixel-shuffled —
 * each `merge`×`merge` block of patches becomes one token whose vector is the block's patch vectors concatenated
 * (row within the block outer, column inner; the grid zero-padded up to a multiple of `merge`) — then one linear
 * layer without bias maps it to the text model's width.
 */

import type { VisionConfig } from './vision-config.js';

/** `mm.model.fc.weight`: ggml [d · merge², nEmbdText] (row j = output j). */
export const IDEFICS3_FC = 'mm.model.fc.weight';

/** The projector's tensors and their ggml shapes. */
export function idefics3Tensors(config: VisionConfig, nEmbdText: number): Record<string, number[]> {
  return { [IDEFICS3_FC]: [config.nEmbd * config.merge * config.merge, nEmbdText] };
}

/**
 * Pixel shuffle of a `width` × `height` patch grid. x: [height · width, d] (row-major) →
 * [(⌈height / s⌉ · ⌈width / s⌉), d · s²], each token's vector ordered [ky][kx][e].
 */
function pixelShuffle(x: Float32Array, width: number, height: number, d: number, s: number): Float32Array {
  const ow = Math.ceil(width / s);
  const oh = Math.ceil(height / s);
  const out = new Float32Array(ow * oh * d * s * s); // padding stays 0
  for (let by = 0; by < oh; by++) {
    for (let bx = 0; bx < ow; bx++) {
      const o = (by * ow + bx) * d * s * s;
      for (let ky = 0; ky < s; ky++) {
        const y = by * s + ky;
        for (let kx = 0; kx < s; kx++) {
          const px = bx * s + kx;
          if (y >= height || px >= width) continue;
          out.set(x.subarray((y * width + px) * d, (y * width + px + 1) * d), o + (ky * s + kx) * d);
        }
      }
    }
  }
  return out;
}

/** y = W·x for each row. x: [n, inDim], W: [outDim, inDim] → [n, outDim]. */
function matmulRows(x: Float32Array, inDim: number, w: Float32Array, outDim: number): Float32Array {
  const n = x.length / inDim;
  const y = new Float32Array(n * outDim);
  for (let t = 0; t < n; t++) {
    const xo = t * inDim;
    for (let j = 0; j < outDim; j++) {
      const wo = j * inDim;
      let s = 0;
      for (let i = 0; i < inDim; i++) s += w[wo + i] * x[xo + i];
      y[t * outDim + j] = s;
    }
  }
  return y;
}

/** The tile's embeddings. vit: [side², d] (the ViT's output) → [(side / merge)², nEmbdText]. */
export function projectIdefics3(
  config: VisionConfig,
  mm: Readonly<Record<string, Float32Array>>,
  vit: Float32Array,
  side: number,
  nEmbdText: number,
): Float32Array {
  const { nEmbd: d, merge: s } = config;
  return matmulRows(pixelShuffle(vit, side, side, d, s), d * s * s, mm[IDEFICS3_FC], nEmbdText);
}
