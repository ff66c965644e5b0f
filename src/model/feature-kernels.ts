/**
 * Whether a model needs the backend's feature kernels (`Ops.loadFeatureKernels`: on WebGPU the recurrent, MoE,
 * AltUp, M-RoPE and IQ1–IQ3 WGSL, a chunk a page chatting with a dense transformer never fetches).
 */

import type { GgufFile } from '../gguf/types.js';
import { IQ_GRID_TYPES } from '../quant/iq-grids.js';
import type { ModelConfig } from './config.js';
import { describeLayers } from './layer-spec.js';

/** True when `gguf` holds IQ1–IQ3 tensors (their codebook grids and WGSL come in chunks of their own). */
export function hasIqTensors(gguf: GgufFile): boolean {
  return gguf.tensors.some((t) => IQ_GRID_TYPES.has(t.type));
}

/** True when `config` has recurrent, MoE or AltUp layers or multi-stream rope (M-RoPE), or `gguf` holds IQ1–IQ3 tensors. */
export function needsFeatureKernels(config: ModelConfig, gguf: GgufFile): boolean {
  if (config.altup || config.ropeMulti || hasIqTensors(gguf)) return true;
  return describeLayers(config).some(
    (l) => l.moe !== null || (l.kind !== 'attention' && l.kind !== 'mlp') || (l.kind === 'attention' && l.ssm),
  );
}
