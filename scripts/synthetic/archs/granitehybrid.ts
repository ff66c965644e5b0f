/**
 * `granitehybrid` (Granite 4.0 H): Mamba-2 layers and llama attention layers (`attention.head_count_kv` 0 marks a
 * Mamba-2 layer; every `attn_every`-th layer, default 3rd, attends), each followed by an FFN — dense gated, or with
 * `n_expert` > 0 granitemoe's experts (n_ff wide) plus a shared expert of `n_ff_shexp` (0 = none). Granite's
 * multipliers (knobs in thousandths as granite's spec; defaults embedding 1, residual 0.7 so the mixers, not the
 * token's own embedding, decide the untied head's argmax), NoPE unless `rope` = 1 (`rope.scaling.finetuned`). Mamba-2
 * knobs: `d_state` (ssm.state_size; 32), `n_group` (ssm.group_count; 2), `ssm_heads` (ssm.time_step_rank; 8),
 * `d_conv` (ssm.conv_kernel; 4), `conv_bias` (1: ssm_conv1d.bias; default 1); d_inner = 2·n_embd as llama.cpp requires.
 */

import { bool, extra, f32, plan, SMALL_SHAPE, type SyntheticArchSpec, u32, u32Array } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { mamba2Dims, mamba2Metadata, type Mamba2SpecDims } from './mamba2-dims.js';
import { moeKnobs, moeTensors } from './qwen3moe.js';

const NAME = 'granitehybrid';

const ssm = (s: ModelShape): Mamba2SpecDims => mamba2Dims(s, { dState: 32, nGroup: 2 }, () => 2 * s.nEmbd);

const isAttention = (s: ModelShape, il: number): boolean => (il + 1) % extra(s, 'attn_every', 3) === 0;
const experts = (s: ModelShape): number => extra(s, 'n_expert', 0);
const shexp = (s: ModelShape): number => extra(s, 'n_ff_shexp', 0);

/** The layer's FFN: dense gated, or routed experts (n_ff wide) and the shared expert. */
function ffn(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const E = s.nEmbd;
  if (experts(s) === 0) {
    return [
      plan.norm(`${b}ffn_norm.weight`, E),
      plan.mat(`${b}ffn_gate.weight`, E, s.nFf),
      plan.mat(`${b}ffn_up.weight`, E, s.nFf),
      plan.mat(`${b}ffn_down.weight`, s.nFf, E),
    ];
  }
  const sh = shexp(s);
  return [
    plan.norm(`${b}ffn_norm.weight`, E),
    ...moeTensors({ ...s, extra: { ...s.extra, n_ff_exp: s.nFf } }, il),
    ...(sh > 0
      ? [
          plan.mat(`${b}ffn_gate_shexp.weight`, E, sh),
          plan.mat(`${b}ffn_up_shexp.weight`, E, sh),
          plan.mat(`${b}ffn_down_shexp.weight`, sh, E),
        ]
      : []),
  ];
}

/** The Mamba-2 mixer of layer il with llama.cpp's names and ggml shapes. */
function mamba2(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const d = ssm(s);
  return [
    plan.mat(`${b}ssm_in.weight`, s.nEmbd, d.proj),
    { name: `${b}ssm_conv1d.weight`, shape: [d.dConv, d.conv], kind: 'conv', std: 1 / Math.sqrt(d.dConv), center: 0 },
    ...(extra(s, 'conv_bias', 1) ? [plan.bias(`${b}ssm_conv1d.bias`, d.conv, 0.1)] : []),
    plan.bias(`${b}ssm_dt.bias`, d.nHeads),
    // ssm_a = −exp(A_log): negative, so every head's state decays; D around 1.
    { name: `${b}ssm_a`, shape: [1, d.nHeads], kind: 'norm', std: 0.3, center: -1 },
    { name: `${b}ssm_d`, shape: [1, d.nHeads], kind: 'norm', std: 0.1, center: 1 },
    { name: `${b}ssm_norm.weight`, shape: [d.inner / d.nGroup, d.nGroup], kind: 'norm', std: 0.1, center: 1 },
    plan.mat(`${b}ssm_out.weight`, d.inner, s.nEmbd),
  ];
}

/** granitehybrid. */
export const granitehybrid: SyntheticArchSpec = {
  name: NAME,
  shape: { ...SMALL_SHAPE, nLayer: 4, tied: false },
  metadata: (s) => {
    const d = ssm(s);
    return {
      [`${NAME}.attention.head_count_kv`]: u32Array(
        Array.from({ length: s.nLayer }, (_, il) => (isAttention(s, il) ? s.nHeadKv : 0)),
      ),
      ...mamba2Metadata(NAME, d),
      [`${NAME}.rope.scaling.finetuned`]: bool(extra(s, 'rope', 0) !== 0),
      ...(experts(s) > 0
        ? {
            [`${NAME}.expert_count`]: u32(moeKnobs(s).nExpert),
            [`${NAME}.expert_used_count`]: u32(moeKnobs(s).nUsed),
            ...(shexp(s) > 0 ? { [`${NAME}.expert_shared_feed_forward_length`]: u32(shexp(s)) } : {}),
          }
        : {}),
      [`${NAME}.embedding_scale`]: f32(extra(s, 'embedding_scale_milli', 1000) / 1000),
      [`${NAME}.residual_scale`]: f32(extra(s, 'residual_scale_milli', 700) / 1000),
      [`${NAME}.attention.scale`]: f32(extra(s, 'attention_scale_milli', 15.625) / 1000),
      [`${NAME}.logit_scale`]: f32(extra(s, 'logit_scale_milli', 2000) / 1000),
    };
  },
  tensors: (s) => {
    const E = s.nEmbd;
    const qDim = s.nHead * s.headDim;
    const kvDim = s.nHeadKv * s.headDim;
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      const mixer = isAttention(s, il)
        ? [
            plan.mat(`${b}attn_q.weight`, E, qDim),
            plan.mat(`${b}attn_k.weight`, E, kvDim),
            plan.mat(`${b}attn_v.weight`, E, kvDim),
            plan.mat(`${b}attn_output.weight`, qDim, E),
          ]
        : mamba2(s, il);
      return [plan.norm(`${b}attn_norm.weight`, E), ...mixer, ...ffn(s, il)];
    };
    return [plan.embedding(s), ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(), ...plan.head(s)];
  },
};
