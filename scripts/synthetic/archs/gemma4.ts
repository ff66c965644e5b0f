/**
 * `gemma4` (dense, E2B-like): sliding layers with their own head size and rope base, global layers with
 * `rope_freqs`, the last `shared_kv` layers reading an earlier layer's KV (no K/V tensors) with double-wide FFNs,
 * per-layer token embeddings, per-layer output scales, tied output. `head_dim` is the global layers' head size.
 * Knobs: `head_dim_swa` (default 32), `swa` (window, default 512), `shared_kv` (default 2), `n_embd_per_layer`
 * (default 64; 0 = none), `k_eq_v` = 1 (no `attn_v`: V is K). The layer pattern repeats sliding, sliding, global,
 * ending so the last two KV layers are sliding then global (as llama.cpp's KV reuse expects). MoE variant (26B-A4B):
 * `n_expert` > 0 (with `n_expert_used`, default 2, and `n_ff_exp`, default 128) adds to every layer the router, its
 * input scale, the expert stacks (`fused_gate_up` = 1: gate|up as one stack) with a per-expert output scale and the
 * branch norms; the dense FFN stays as the shared expert.
 */

import {
  boolArray,
  extra,
  f32,
  plan,
  SMALL_SHAPE,
  type SpecMetadata,
  u32,
  u32Array,
  type SyntheticArchSpec,
} from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';
import { moeMetadata, moeTensors } from './qwen3moe.js';

interface Layout {
  readonly sliding: readonly boolean[];
  readonly kvFromStart: number;
  readonly headDimSwa: number;
  readonly nPL: number;
}

const layout = (s: ModelShape): Layout => {
  const kvFromStart = s.nLayer - extra(s, 'shared_kv', 2);
  // Global every third layer counted back from the last KV layer (which is global, the one before it sliding).
  const sliding = Array.from({ length: s.nLayer }, (_, il) =>
    il < kvFromStart ? (kvFromStart - 1 - il) % 3 !== 0 : (s.nLayer - 1 - il) % 2 !== 0,
  );
  return { sliding, kvFromStart, headDimSwa: extra(s, 'head_dim_swa', 32), nPL: extra(s, 'n_embd_per_layer', 64) };
};

const ffnOf = (s: ModelShape, l: Layout, il: number): number => (il < l.kvFromStart ? s.nFf : 2 * s.nFf);

/** gemma4. */
export const gemma4: SyntheticArchSpec = {
  name: 'gemma4',
  shape: { ...SMALL_SHAPE, nLayer: 5, tied: true },
  metadata: (s): SpecMetadata => {
    const l = layout(s);
    return {
      'gemma4.feed_forward_length': u32Array(Array.from({ length: s.nLayer }, (_, il) => ffnOf(s, l, il))),
      'gemma4.attention.sliding_window': u32(extra(s, 'swa', 512)),
      'gemma4.attention.sliding_window_pattern': boolArray(l.sliding),
      'gemma4.attention.key_length_swa': u32(l.headDimSwa),
      'gemma4.attention.value_length_swa': u32(l.headDimSwa),
      'gemma4.rope.dimension_count_swa': u32(l.headDimSwa),
      'gemma4.rope.freq_base': f32(1000000),
      'gemma4.rope.freq_base_swa': f32(10000),
      'gemma4.embedding_length_per_layer_input': u32(l.nPL),
      'gemma4.attention.shared_kv_layers': u32(s.nLayer - l.kvFromStart),
      'gemma4.final_logit_softcapping': f32(30),
      'gemma4.attention.layer_norm_rms_epsilon': f32(1e-6),
      ...(extra(s, 'n_expert', 0) > 0 ? moeMetadata('gemma4', s) : {}),
    };
  },
  tensors: (s) => {
    const l = layout(s);
    const E = s.nEmbd;
    const total = l.nPL * s.nLayer;
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      const hd = l.sliding[il] ? l.headDimSwa : s.headDim;
      const qDim = s.nHead * hd;
      const kvDim = s.nHeadKv * hd;
      const ownKv = il < l.kvFromStart;
      const nFf = ffnOf(s, l, il);
      return [
        plan.norm(`${b}attn_norm.weight`, E),
        plan.mat(`${b}attn_q.weight`, E, qDim),
        ...(ownKv ? [plan.mat(`${b}attn_k.weight`, E, kvDim)] : []),
        ...(ownKv && extra(s, 'k_eq_v', 0) !== 1 ? [plan.mat(`${b}attn_v.weight`, E, kvDim)] : []),
        plan.mat(`${b}attn_output.weight`, qDim, E),
        // Attention scale is 1: q/k norm weights around hd^(−1/4) keep random q·k near unit variance.
        plan.norm(`${b}attn_q_norm.weight`, hd, hd ** -0.25),
        ...(ownKv ? [plan.norm(`${b}attn_k_norm.weight`, hd, hd ** -0.25)] : []),
        plan.norm(`${b}post_attention_norm.weight`, E),
        plan.norm(`${b}ffn_norm.weight`, E),
        plan.mat(`${b}ffn_gate.weight`, E, nFf),
        plan.mat(`${b}ffn_up.weight`, E, nFf),
        plan.mat(`${b}ffn_down.weight`, nFf, E),
        ...(extra(s, 'n_expert', 0) > 0 ? experts(s, il) : []),
        plan.norm(`${b}post_ffw_norm.weight`, E),
        ...(l.nPL > 0
          ? [
              plan.mat(`${b}inp_gate.weight`, E, l.nPL),
              plan.mat(`${b}proj.weight`, l.nPL, E),
              plan.norm(`${b}post_norm.weight`, E),
            ]
          : []),
        plan.norm(`${b}layer_output_scale.weight`, 1, 0.8),
      ];
    };
    return [
      plan.embedding(s),
      ...(l.nPL > 0
        ? [
            plan.mat('per_layer_token_embd.weight', total, s.nVocab, 1 / Math.sqrt(l.nPL)),
            // llama-quantize never quantizes it ("not too big so keep them as it is"): kept F32 like a conv kernel.
            { ...plan.mat('per_layer_model_proj.weight', E, total), kind: 'conv' as const },
            plan.norm('per_layer_proj_norm.weight', l.nPL),
          ]
        : []),
      // Divisors around 1.5 (the spec path fills every 1-D tensor like a norm; real files hold 1 … 1e30).
      plan.norm('rope_freqs.weight', s.headDim / 2, 1.5),
      ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(),
      ...plan.head(s),
    ];
  },
};

/** A MoE layer's router (its input scale around √n_embd undoes llama.cpp's 1/√n_embd), experts and branch norms. */
function experts(s: ModelShape, il: number): TensorPlan[] {
  const b = `blk.${il}.`;
  const E = s.nEmbd;
  const nExpert = extra(s, 'n_expert', 0);
  const stacks = moeTensors(s, il);
  // `fused_gate_up` = 1: gate and up experts as one `ffn_gate_up_exps` stack (as convert_hf_to_gguf writes Gemma 4).
  const fused = extra(s, 'fused_gate_up', 0) === 1;
  const nFfExp = extra(s, 'n_ff_exp', 128);
  return [
    ...(fused ? [stacks[0], plan.stack(`${b}ffn_gate_up_exps.weight`, E, 2 * nFfExp, nExpert), stacks[3]] : stacks),
    plan.norm(`${b}ffn_gate_inp.scale`, E, Math.sqrt(E)),
    { ...plan.norm(`${b}ffn_down_exps.scale`, nExpert), std: 0.3 },
    plan.norm(`${b}pre_ffw_norm_2.weight`, E),
    plan.norm(`${b}post_ffw_norm_1.weight`, E),
    plan.norm(`${b}post_ffw_norm_2.weight`, E),
  ];
}
