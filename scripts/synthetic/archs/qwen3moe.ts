/**
 * `qwen3moe`: qwen3's attention (per-head q/k norms) and a mixture-of-experts FFN: router `ffn_gate_inp`, expert
 * stacks `ffn_{gate,up,down}_exps` [cols, rows, n_expert]. Knobs: n_expert (8), n_expert_used (2), n_ff_exp (128).
 */

import { extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32 } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

/** The MoE knobs of a shape. */
export function moeKnobs(s: ModelShape): { nExpert: number; nUsed: number; nFfExp: number } {
  return {
    nExpert: extra(s, 'n_expert', 8),
    nUsed: extra(s, 'n_expert_used', 2),
    nFfExp: extra(s, 'n_ff_exp', 128),
  };
}

/** The attention of llama's block without its FFN (the first 8 tensors, or 11 with q/k norms / biases). */
function attention(s: ModelShape, il: number, o: { qkvBias?: boolean; qkNorm?: boolean }): TensorPlan[] {
  return plan.llamaBlock(s, il, o).filter((t) => !/\.ffn_(gate|up|down)\.weight$/.test(t.name));
}

/** The router and expert stacks of layer `il` (after ffn_norm). */
export function moeTensors(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const { nExpert, nFfExp } = moeKnobs(s);
  return [
    plan.router(`${b}ffn_gate_inp.weight`, s.nEmbd, nExpert),
    plan.stack(`${b}ffn_gate_exps.weight`, s.nEmbd, nFfExp, nExpert),
    plan.stack(`${b}ffn_up_exps.weight`, s.nEmbd, nFfExp, nExpert),
    plan.stack(`${b}ffn_down_exps.weight`, nFfExp, s.nEmbd, nExpert),
  ];
}

/** The metadata keys of a MoE shape. */
export function moeMetadata(arch: string, s: ModelShape): Record<string, ReturnType<typeof u32>> {
  const { nExpert, nUsed, nFfExp } = moeKnobs(s);
  return {
    [`${arch}.expert_count`]: u32(nExpert),
    [`${arch}.expert_used_count`]: u32(nUsed),
    [`${arch}.expert_feed_forward_length`]: u32(nFfExp),
  };
}

/** A MoE block: attention (options as llama's block), ffn_norm, then `ffn` (router and experts, …). */
export function moeBlock(
  s: ModelShape,
  il: number,
  o: { qkvBias?: boolean; qkNorm?: boolean },
  ffn: (s: ModelShape, il: number) => TensorPlan[],
): TensorPlan[] {
  return [...attention(s, il, o), ...ffn(s, il)];
}

/** qwen3moe. */
export const qwen3moe: SyntheticArchSpec = {
  name: 'qwen3moe',
  shape: { ...SMALL_SHAPE, nLayer: 3, tied: false },
  metadata: (s) => moeMetadata('qwen3moe', s),
  tensors: (s) => [
    plan.embedding(s),
    ...Array.from({ length: s.nLayer }, (_, il) => moeBlock(s, il, { qkNorm: true }, moeTensors)).flat(),
    ...plan.head(s),
  ],
};
