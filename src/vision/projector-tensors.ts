/**
 * Per projector type, the `mm.*` tensors the loader reads (beyond the ViT's) and which tensor dimension is the output
 * width — the text model's n_embd it must match (llama.cpp `clip_n_mmproj_embd`). Keyed by `clip.projector_type`.
 */

import { IDEFICS3_FC, idefics3Tensors } from './projector-idefics3.js';
import { LDP_OUTPUT, ldpTensors } from './projector-ldp.js';
import { LFM2_TENSORS, lfm2Tensors } from './projector-lfm2.js';
import { MLP_TENSORS, mlpTensors } from './projector-mlp.js';
import { GEMMA4V_TENSORS, gemma4vTensors } from './projector-gemma4v.js';
import { PIXTRAL_TENSORS, pixtralTensors } from './projector-pixtral.js';
import { QWEN25VL_TENSORS, qwen25vlTensors } from './projector-qwen25vl.js';
import { QWEN3VL_TENSORS, qwen3vlTensors } from './projector-qwen3vl.js';
import { VISION_TENSORS } from './tensor-names.js';
import type { VisionConfig } from './vision-config.js';

interface ProjectorTensors {
  /** The tensor whose ggml dimension `dim` is the projected width. */
  readonly output: { readonly tensor: string; readonly dim: number };
  /**
   * Tensors by name with their ggml shapes (`shapeOf`: a tensor's shape in the file, undefined when absent — for
   * optional tensors and widths only the file knows); gemma3's are fields of `VisionWeights` of their own.
   */
  tensors(
    config: VisionConfig,
    nEmbdText: number,
    shapeOf: (name: string) => readonly number[] | undefined,
  ): Record<string, number[]>;
}

export const PROJECTOR_TENSORS: Readonly<Record<string, ProjectorTensors>> = {
  gemma3: { output: { tensor: VISION_TENSORS.inputProjection, dim: 0 }, tensors: () => ({}) },
  idefics3: { output: { tensor: IDEFICS3_FC, dim: 1 }, tensors: idefics3Tensors },
  lfm2: { output: { tensor: LFM2_TENSORS.down, dim: 1 }, tensors: lfm2Tensors },
  mlp: { output: { tensor: MLP_TENSORS.down, dim: 1 }, tensors: mlpTensors },
  pixtral: { output: { tensor: PIXTRAL_TENSORS.down, dim: 1 }, tensors: pixtralTensors },
  gemma4v: { output: { tensor: GEMMA4V_TENSORS.proj, dim: 1 }, tensors: gemma4vTensors },
  ldp: { output: { tensor: LDP_OUTPUT, dim: 1 }, tensors: ldpTensors },
  'qwen2.5vl_merger': { output: { tensor: QWEN25VL_TENSORS.down, dim: 1 }, tensors: qwen25vlTensors },
  qwen3vl_merger: { output: { tensor: QWEN3VL_TENSORS.down, dim: 1 }, tensors: qwen3vlTensors },
};
