/**
 * `nemotron_h_moe` (Nemotron 3 Nano): nemotron_h's pattern M E M * M E (Mamba-2, experts, attention without rope),
 * the experts block marked as llama.cpp's converter does (`feed_forward_length` = the expert width on expert layers,
 * else 0; `attention.head_count_kv` per layer): router `ffn_gate_inp`, selection bias `exp_probs_b`, ungated expert
 * stacks `ffn_{up,down}_exps` and the ungated shared expert `ffn_{up,down}_shexp`. Knobs: n_expert (8), n_expert_used
 * (2), n_ff_exp (128), n_ff_shexp (192), weights_norm (1: `expert_weights_norm`), weights_scale_milli (2500:
 * `expert_weights_scale` 2.5), `mtp` (1: one trailing multi-token-prediction block as llama.cpp's converter appends for
 * checkpoints with `num_nextn_predict_layers`: `nextn_predict_layers` 1, block_count and the per-layer arrays one
 * longer, the block attention + experts with its `nextn.*` fusion tensors; default 0), and nemotron_h's Mamba-2 knobs.
 */

import { bool, extra, f32, plan, SMALL_SHAPE, type SyntheticArchSpec, u32, u32Array } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import type { MetadataEntry } from '../arch-spec.js';
import { nemotronHMetadata, nemotronHTensors } from './nemotron_h.js';
import { moeKnobs } from './qwen3moe.js';

const NAME = 'nemotron_h_moe';
const PATTERN = ['M', 'E', 'M', '*', 'M', 'E'] as const;
const shexp = (s: ModelShape): number => extra(s, 'n_ff_shexp', 192);

/** The experts block of layer il after its attn_norm. */
function experts(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const E = s.nEmbd;
  const { nExpert, nFfExp } = moeKnobs(s);
  return [
    plan.router(`${b}ffn_gate_inp.weight`, E, nExpert),
    plan.bias(`${b}exp_probs_b.bias`, nExpert, 0.2),
    plan.stack(`${b}ffn_up_exps.weight`, E, nFfExp, nExpert),
    plan.stack(`${b}ffn_down_exps.weight`, nFfExp, E, nExpert),
    plan.mat(`${b}ffn_up_shexp.weight`, E, shexp(s)),
    plan.mat(`${b}ffn_down_shexp.weight`, shexp(s), E),
  ];
}

/** The multi-token-prediction block `il` (after the trunk): nextn fusion, attention, then experts (llama.cpp's names). */
function mtpBlock(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const E = s.nEmbd;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  return [
    plan.norm(`${b}nextn.enorm.weight`, E),
    plan.norm(`${b}nextn.hnorm.weight`, E),
    plan.mat(`${b}nextn.eh_proj.weight`, 2 * E, E),
    plan.norm(`${b}nextn.shared_head_norm.weight`, E),
    plan.norm(`${b}attn_norm.weight`, E),
    plan.mat(`${b}attn_q.weight`, E, qDim),
    plan.mat(`${b}attn_k.weight`, E, kvDim),
    plan.mat(`${b}attn_v.weight`, E, kvDim),
    plan.mat(`${b}attn_output.weight`, qDim, E),
    plan.norm(`${b}post_attention_norm.weight`, E),
    ...experts(s, il),
  ];
}

const hasMtp = (s: ModelShape): boolean => extra(s, 'mtp', 0) !== 0;

/** nemotron_h_moe. */
export const nemotronHMoe: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 6, tied: false },
  metadata: (s) => {
    const { nExpert, nUsed, nFfExp } = moeKnobs(s);
    const trunk = nemotronHMetadata(NAME, PATTERN, { ...s, nFf: nFfExp });
    const longer = (key: string, last: number) => u32Array([...(trunk[key]!.value as Uint32Array), last]);
    const mtp: Record<string, MetadataEntry> = hasMtp(s)
      ? {
          [`${NAME}.block_count`]: u32(s.nLayer + 1),
          [`${NAME}.nextn_predict_layers`]: u32(1),
          [`${NAME}.feed_forward_length`]: longer(`${NAME}.feed_forward_length`, nFfExp),
          [`${NAME}.attention.head_count_kv`]: longer(`${NAME}.attention.head_count_kv`, s.nHeadKv),
        }
      : {};
    return {
      ...trunk,
      ...mtp,
      [`${NAME}.expert_count`]: u32(nExpert),
      [`${NAME}.expert_used_count`]: u32(nUsed),
      [`${NAME}.expert_feed_forward_length`]: u32(nFfExp),
      [`${NAME}.expert_shared_feed_forward_length`]: u32(shexp(s)),
      [`${NAME}.expert_shared_count`]: u32(1),
      [`${NAME}.expert_weights_norm`]: bool(extra(s, 'weights_norm', 1) !== 0),
      [`${NAME}.expert_weights_scale`]: f32(extra(s, 'weights_scale_milli', 2500) / 1000),
    };
  },
  tensors: (s) => [...nemotronHTensors(PATTERN, s, experts), ...(hasMtp(s) ? mtpBlock(s, s.nLayer) : [])],
};
