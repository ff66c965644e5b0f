/**
 * The LLaVA-1.5 projector (llama.cpp `clip_graph_llava` for `PROJECTOR_TYPE_MLP`): the CLIP ViT runs all blocks but
 * the last, its class token appended after the patches; the patch rows are taken from row 1 on when there is a class
 * token (llama.cpp's `patches` input: `i + 1`), then `mm.0` → GELU → `mm.2`, each with bias, to the text model's width.
 */

import { LlmError } from '../errors.js';
import { llavaWidth } from './llava-features.js';
import { matmulRows } from './pixel-shuffle.js';
import type { VisionConfig } from './vision-config.js';

/** llama.cpp's tensor names (`TN_LLAVA_PROJ`). */
export const MLP_TENSORS = {
  /** ggml [d, hidden] */
  up: 'mm.0.weight',
  upB: 'mm.0.bias',
  /** ggml [hidden, nEmbdText] */
  down: 'mm.2.weight',
  downB: 'mm.2.bias',
} as const;

/** The projector's tensors and their ggml shapes (the hidden width as the file has it). */
export function mlpTensors(
  config: VisionConfig,
  nEmbdText: number,
  shapeOf: (name: string) => readonly number[] | undefined,
): Record<string, number[]> {
  if (shapeOf('mm.3.weight') !== undefined) {
    // llama.cpp runs such files as `mlp_norm` (Yi-VL: LayerNorms after each linear layer).
    throw new LlmError(
      'unsupported-arch',
      "mmproj projector 'mlp' with 'mm.3.weight' (Yi-VL's mlp_norm) is not supported",
      {
        details: { projector: 'mlp', tensor: 'mm.3.weight' },
      },
    );
  }
  const hidden = shapeOf(MLP_TENSORS.up)?.[1] ?? 0;
  const T = MLP_TENSORS;
  return {
    [T.up]: [llavaWidth(config), hidden],
    [T.upB]: [hidden],
    [T.down]: [hidden, nEmbdText],
    [T.downB]: [nEmbdText],
  };
}

/** √(2/π), the constant of the tanh approximation of GELU (`ggml_gelu`). */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/**
 * The image's embeddings. vit: [nPatches (+ 1), d] (the ViT's output; the class token last when `hasClass`) →
 * [nPatches, nEmbdText].
 */
export function projectMlp(
  config: VisionConfig,
  mm: Readonly<Record<string, Float32Array>>,
  vit: Float32Array,
  nPatches: number,
  hasClass: boolean,
  nEmbdText: number,
): Float32Array {
  const d = llavaWidth(config); // n_embd per stacked feature layer
  const T = MLP_TENSORS;
  const rows = hasClass ? vit.subarray(d, (nPatches + 1) * d) : vit.subarray(0, nPatches * d);
  const hidden = mm[T.upB].length;
  const h = matmulRows(rows, d, mm[T.up], hidden, mm[T.upB]);
  for (let i = 0; i < h.length; i++) {
    const u = h[i];
    h[i] = 0.5 * u * (1 + Math.tanh(GELU_COEF * u * (1 + 0.044715 * u * u)));
  }
  return matmulRows(h, hidden, mm[T.down], nEmbdText, mm[T.downB]);
}
