/**
 * `falcon-h1` (Falcon-H1): llama.cpp's falcon-h1 graph. Every layer runs attention (neox rope, no output bias) and a
 * Mamba-2 mixer (`ssm.*` geometry; `ssm_norm` optional) side by side on the same `attn_norm`-ed input and adds both to
 * the residual, then a gated SiLU FFN whose pre-norm is `blk.N.ffn_norm` (no `.weight`, as llama.cpp names it). The
 * model's µP multipliers are folded into the weights by llama.cpp's converter, so none is read here.
 */

import { archOptions, readStandardConfig } from '../config.js';
import { readMamba2Dims } from '../mamba2-config.js';
import { LLAMA_CPP_TENSOR_NAMES, type Architecture } from './architecture.js';

const NAME = 'falcon-h1';
const options = archOptions({ ropeKind: 'neox', attnOutBias: false });

/** falcon-h1. */
export const falconH1: Architecture = {
  name: NAME,
  config(meta) {
    const base = readStandardConfig(meta, NAME, options);
    return {
      ...base,
      mamba2Layers: new Array<boolean>(base.nLayers).fill(true),
      mamba2: readMamba2Dims(meta, NAME),
      mamba2Parallel: true,
    };
  },
  tensors: { ...LLAMA_CPP_TENSOR_NAMES, ffnNorm: 'blk.{i}.ffn_norm' },
  options,
};
