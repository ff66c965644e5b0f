/** `--quant q4_k_m` for synthetic models: llama.cpp's Q4_K_M per-tensor types (scripts/synthetic/quant-mix.ts). */

import { describe, expect, it } from 'vitest';
import type { TensorPlan } from '../../../scripts/synthetic/arch-plan.js';
import { applyQuantMix, quantMixOf } from '../../../scripts/synthetic/quant-mix.js';
import { GgmlType } from '../../../src/gguf/types.js';

const mat = (name: string): TensorPlan => ({ name, shape: [256, 256], kind: 'matrix', std: 0.1, center: 0 });

describe('q4_k_m mix', () => {
  it('names Q4_K plus the mix; plain names are no mix', () => {
    expect(quantMixOf('Q4_K_M')).toEqual({ base: GgmlType.Q4_K, mix: 'q4_k_m' });
    expect(quantMixOf('q4_k')).toBeNull();
  });

  it("raises ffn_down and attn_v in use_more_bits' layers to Q6_K and attn_qkv to Q5_K, as llama-quant.cpp", () => {
    // 8 layers: DeltaNet (attn_qkv) in 0–2 and 4–6, attention (attn_v) in 3 and 7; an F16 matrix stays as it is.
    const plans: TensorPlan[] = [mat('token_embd.weight')];
    for (let il = 0; il < 8; il++) {
      plans.push(mat(il % 4 === 3 ? `blk.${il}.attn_v.weight` : `blk.${il}.attn_qkv.weight`));
      plans.push(mat(`blk.${il}.ffn_down.weight`), mat(`blk.${il}.ffn_up.weight`));
    }
    plans.push(mat('output.weight'));
    const types: GgmlType[] = plans.map((p) => (p.name === 'output.weight' ? GgmlType.Q6_K : GgmlType.Q4_K));
    types[plans.findIndex((p) => p.name === 'blk.5.ffn_down.weight')] = GgmlType.F16;
    applyQuantMix('q4_k_m', plans, types);
    const typeOf = (name: string) => types[plans.findIndex((p) => p.name === name)];
    // use_more_bits(i, 8): i < 1, i ≥ 7, (i − 1) % 3 = 2 → layers 0, 3, 6, 7.
    const down = [0, 1, 2, 3, 4, 5, 6, 7].map((il) => typeOf(`blk.${il}.ffn_down.weight`));
    const [K4, K6] = [GgmlType.Q4_K, GgmlType.Q6_K];
    expect(down).toEqual([K6, K4, K4, K6, K4, GgmlType.F16, K6, K6]);
    // Two attn_v: use_more_bits(i, 2) holds for i ≥ 1 only.
    expect([typeOf('blk.3.attn_v.weight'), typeOf('blk.7.attn_v.weight')]).toEqual([K4, K6]);
    expect(typeOf('blk.0.attn_qkv.weight')).toBe(GgmlType.Q5_K);
    expect([typeOf('blk.0.ffn_up.weight'), typeOf('token_embd.weight'), typeOf('output.weight')]).toEqual([K4, K4, K6]);
  });
});
