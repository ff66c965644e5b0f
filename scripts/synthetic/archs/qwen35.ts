/**
 * `qwen35`: gated DeltaNet layers (every layer but each `full_attention_interval`-th) and gated full-attention layers
 * ([q | gate] per head in attn_q, q/k norms, partial rope with M-RoPE sections), `post_attention_norm` as the FFN
 * pre-norm, llama.cpp's tensor names and `ssm.*` keys. Knobs: `interval` (full_attention_interval; default 4),
 * `n_rot` (rope.dimension_count; default 32), `conv` (ssm.conv_kernel; default 4), `head_k` (ssm.state_size;
 * default 32), `k_heads` (ssm.group_count; default 2), `v_heads` (ssm.time_step_rank; default 4),
 * `recurrent_mask` (bit il set: layer il is DeltaNet, written as `attention.recurrent_layers`; default: by
 * `interval`), `mtp` (1: one trailing multi-token-prediction block, a full-attention block with its `nextn.*` fusion
 * tensors, counted in block_count with `nextn_predict_layers` 1 as llama.cpp's converter writes Qwen3.5's MTP head;
 * default 0).
 */

import { boolArray, extra, plan, SMALL_SHAPE, type SyntheticArchSpec, u32, u32Array } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

const dims = (s: ModelShape) => {
  const headK = extra(s, 'head_k', 32);
  const nK = extra(s, 'k_heads', 2);
  const nV = extra(s, 'v_heads', 4);
  return { headK, nK, nV, conv: extra(s, 'conv', 4), vCols: headK * nV, convDim: 2 * headK * nK + headK * nV };
};

/**
 * Layer il attends: by `recurrent_mask` (bit il set = DeltaNet; written as `attention.recurrent_layers`, which
 * llama.cpp reads before the interval, as its converter writes it from the checkpoint's layer_types), else every
 * `interval`-th layer.
 */
const isAttention = (s: ModelShape, il: number): boolean => {
  const mask = extra(s, 'recurrent_mask', -1);
  return mask >= 0 ? ((mask >> il) & 1) === 0 : (il + 1) % extra(s, 'interval', 4) === 0;
};

/** M-RoPE sections [t, h, w, 0] over nRot/2 pairs, balanced so the interleaved layout never reaches the e section. */
const sections = (nRot: number): number[] => {
  const pairs = nRot / 2;
  const t = Math.ceil(pairs / 3);
  const h = Math.ceil((pairs - t) / 2);
  return [t, h, pairs - t - h, 0];
};

/** qwen35. */
export const qwen35: SyntheticArchSpec = {
  name: 'qwen35',
  shape: { ...SMALL_SHAPE, nLayer: 4, tied: false },
  namedShapes: {
    // Qwen3.5-0.8B (Qwen/Qwen3.5-0.8B text config; llama.cpp types 24 layers × 1024 as 0.8B): 8 heads / 2 KV heads of
    // 256, a quarter of each head rotated, 16 key and 16 value DeltaNet heads of 128, 4-tap conv, tied embeddings.
    'qwen3.5-0.8b': {
      nEmbd: 1024,
      nHead: 8,
      nHeadKv: 2,
      headDim: 256,
      nFf: 3584,
      nLayer: 24,
      nVocab: 248320,
      tied: true,
      extra: { n_rot: 64, head_k: 128, k_heads: 16, v_heads: 16, conv: 4, interval: 4 },
    },
  },
  metadata: (s) => {
    const d = dims(s);
    const nRot = extra(s, 'n_rot', 32);
    return {
      ...(extra(s, 'mtp', 0) ? { 'qwen35.block_count': u32(s.nLayer + 1), 'qwen35.nextn_predict_layers': u32(1) } : {}),
      ...(extra(s, 'recurrent_mask', -1) >= 0
        ? {
            // One flag per block, the MTP block's false (the converter's layout).
            'qwen35.attention.recurrent_layers': boolArray(
              Array.from(
                { length: s.nLayer + (extra(s, 'mtp', 0) ? 1 : 0) },
                (_, il) => il < s.nLayer && !isAttention(s, il),
              ),
            ),
          }
        : {}),
      'qwen35.rope.dimension_count': u32(nRot),
      'qwen35.rope.dimension_sections': u32Array(sections(nRot)),
      'qwen35.full_attention_interval': u32(extra(s, 'interval', 4)),
      'qwen35.ssm.conv_kernel': u32(d.conv),
      'qwen35.ssm.state_size': u32(d.headK),
      'qwen35.ssm.group_count': u32(d.nK),
      'qwen35.ssm.time_step_rank': u32(d.nV),
      'qwen35.ssm.inner_size': u32(d.vCols),
      'qwen35.vocab_size': u32(s.nVocab),
    };
  },
  tensors: (s) => {
    const E = s.nEmbd;
    const d = dims(s);
    const qDim = s.nHead * s.headDim;
    const kvDim = s.nHeadKv * s.headDim;
    const ffn = (b: string): TensorPlan[] => [
      plan.norm(`${b}post_attention_norm.weight`, E),
      plan.mat(`${b}ffn_gate.weight`, E, s.nFf),
      plan.mat(`${b}ffn_up.weight`, E, s.nFf),
      plan.mat(`${b}ffn_down.weight`, s.nFf, E),
    ];
    const attention = (b: string): TensorPlan[] => [
      plan.norm(`${b}attn_norm.weight`, E),
      plan.mat(`${b}attn_q.weight`, E, 2 * qDim), // [q | gate] per head
      plan.mat(`${b}attn_k.weight`, E, kvDim),
      plan.mat(`${b}attn_v.weight`, E, kvDim),
      plan.norm(`${b}attn_q_norm.weight`, s.headDim),
      plan.norm(`${b}attn_k_norm.weight`, s.headDim),
      plan.mat(`${b}attn_output.weight`, qDim, E),
      ...ffn(b),
    ];
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      if (il === s.nLayer) {
        // The MTP block: a full-attention block (below) after its nextn fusion tensors.
        return [
          plan.mat(`${b}nextn.eh_proj.weight`, 2 * E, E),
          plan.norm(`${b}nextn.enorm.weight`, E),
          plan.norm(`${b}nextn.hnorm.weight`, E),
          plan.norm(`${b}nextn.shared_head_norm.weight`, E),
          ...attention(b),
        ];
      }
      if (isAttention(s, il)) return attention(b);
      return [
        plan.norm(`${b}attn_norm.weight`, E),
        plan.mat(`${b}attn_qkv.weight`, E, d.convDim),
        plan.mat(`${b}attn_gate.weight`, E, d.vCols),
        {
          name: `${b}ssm_conv1d.weight`,
          shape: [d.conv, d.convDim],
          kind: 'conv',
          std: 1 / Math.sqrt(d.conv),
          center: 0,
        },
        plan.bias(`${b}ssm_dt.bias`, d.nV),
        // ssm_a = −exp(A_log): negative, so every head's state decays.
        { name: `${b}ssm_a`, shape: [d.nV], kind: 'norm', std: 0.15, center: -0.6 },
        plan.mat(`${b}ssm_beta.weight`, E, d.nV),
        plan.mat(`${b}ssm_alpha.weight`, E, d.nV),
        plan.norm(`${b}ssm_norm.weight`, d.headK),
        plan.mat(`${b}ssm_out.weight`, d.vCols, E),
        ...ffn(b),
      ];
    };
    const nBlocks = s.nLayer + (extra(s, 'mtp', 0) ? 1 : 0);
    return [plan.embedding(s), ...Array.from({ length: nBlocks }, (_, il) => block(il)).flat(), ...plan.head(s)];
  },
};
