/**
 * llama.cpp's per-tensor type mixes for a synthetic model (`--quant q4_k_m`): which matrices of a mostly-Q4_K file get
 * more bits, after llama_tensor_get_type (llama-quant.cpp) for LLAMA_FTYPE_MOSTLY_Q4_K_M: attn_v and ffn_down Q6_K in
 * the layers `use_more_bits` picks (the first and last eighth, every third between), fused attn_qkv Q5_K, the output
 * (and a tied embedding) Q6_K as for any K quant.
 */

import { GgmlType } from '../../src/gguf/types.js';
import type { TensorPlan } from './arch-plan.js';

/** The mixes a quant name may ask for. */
export type QuantMix = 'q4_k_m';

/** The base type and the mix a quant name means (`q4_k_m` → Q4_K + the mix), or null for a plain type name. */
export function quantMixOf(name: string): { readonly base: GgmlType; readonly mix: QuantMix } | null {
  return name.toLowerCase() === 'q4_k_m' ? { base: GgmlType.Q4_K, mix: 'q4_k_m' } : null;
}

/** llama.cpp's use_more_bits: the i-th of n tensors of a kind gets more bits. */
const moreBits = (i: number, n: number): boolean =>
  i < Math.floor(n / 8) || i >= Math.floor((7 * n) / 8) || (i - Math.floor(n / 8)) % 3 === 2;

/** Raises `types` (one per plan, from tensorType) in place to `mix`'s; only Q4_K matrices change (same block size). */
export function applyQuantMix(mix: QuantMix, plans: readonly TensorPlan[], types: GgmlType[]): void {
  if (mix !== 'q4_k_m') return;
  const kinds: [RegExp, GgmlType, boolean][] = [
    [/\.attn_v\.weight$/, GgmlType.Q6_K, true],
    [/\.ffn_down(_exps)?\.weight$/, GgmlType.Q6_K, true],
    [/\.attn_qkv\.weight$/, GgmlType.Q5_K, false],
  ];
  for (const [pattern, type, someLayers] of kinds) {
    const idx = plans.flatMap((p, i) => (pattern.test(p.name) ? [i] : []));
    idx.forEach((i, k) => {
      if (types[i] === GgmlType.Q4_K && (!someLayers || moreBits(k, idx.length))) types[i] = type;
    });
  }
}
