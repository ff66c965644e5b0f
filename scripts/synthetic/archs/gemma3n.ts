/**
 * `gemma3n` (E2B-like): gemma3's attention block (per-head q/k norms, weightless V norm, attention scale 1,
 * post-norms) with AltUp (4 streams: `altup_proj` / `altup_unembd_proj` stacks, per-layer router, prediction and
 * correction coefficients), LAuReL (rank 64), per-layer token embeddings (256 wide: llama.cpp fixes both), every 5th
 * layer global, layers from 20 on reading layer 18's or 19's KV (their own K/V tensors unused), tied output. llama.cpp reads none of
 * the AltUp keys (they are written as the converter does). Knobs: `swa` (window, default 512), `router` (scale of the
 * AltUp router weights, default 1).
 */

import {
  boolArray,
  extra,
  f32,
  f32Array,
  plan,
  SMALL_SHAPE,
  type SpecMetadata,
  u32,
  type SyntheticArchSpec,
} from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

const N_ALTUP = 4;
const N_PL = 256; // llama.cpp n_embd_altup
const LAUREL_RANK = 64; // llama.cpp laurel_rank
const KV_FROM_START = 20; // llama.cpp n_layer_kv_from_start
const SPARSE_LAYERS = 10;

const sliding = (s: ModelShape): boolean[] => Array.from({ length: s.nLayer }, (_, il) => il % 5 < 4);

/** A small coefficient matrix (F32: llama-quantize keeps `altup` tensors; small values keep the streams well-conditioned). */
const coef = (name: string, cols: number, rows: number): TensorPlan => ({
  name,
  shape: [cols, rows],
  kind: 'router',
  std: 0.3 / Math.sqrt(cols),
  center: 0,
});

/**
 * A matrix llama-quantize never re-types (names holding `altup` or `laurel`, `per_layer_model_proj`): kept F32 like
 * a conv kernel, so the quantized file and llama.cpp's dequantized copy hold the same values.
 */
const f32Mat = (name: string, cols: number, rows: number): TensorPlan => ({
  ...plan.mat(name, cols, rows),
  kind: 'conv',
});

/** gemma3n. */
export const gemma3n: SyntheticArchSpec = {
  name: 'gemma3n',
  shape: { ...SMALL_SHAPE, nLayer: 5, tied: true },
  metadata: (s): SpecMetadata => ({
    'gemma3n.attention.sliding_window': u32(extra(s, 'swa', 512)),
    'gemma3n.attention.sliding_window_pattern': boolArray(sliding(s)),
    'gemma3n.rope.freq_base': f32(1000000),
    'gemma3n.rope.freq_base_swa': f32(10000),
    'gemma3n.altup.active_idx': u32(0),
    'gemma3n.altup.num_inputs': u32(N_ALTUP),
    'gemma3n.embedding_length_per_layer_input': u32(N_PL),
    'gemma3n.attention.shared_kv_layers': u32(Math.max(0, s.nLayer - KV_FROM_START)),
    // The converter writes Φ⁻¹(pattern): 0.95 on the first 10 layers, 0 (−∞) after; llama.cpp reads none of it.
    'gemma3n.activation_sparsity_scale': f32Array(
      Array.from({ length: s.nLayer }, (_, il) => (il < SPARSE_LAYERS ? 1.6448533535003662 : -Infinity)),
    ),
    'gemma3n.final_logit_softcapping': f32(30),
    'gemma3n.attention.layer_norm_rms_epsilon': f32(1e-6),
  }),
  tensors: (s) => {
    const E = s.nEmbd;
    const N = N_ALTUP;
    const total = N_PL * s.nLayer;
    const block = (il: number): TensorPlan[] => {
      const b = `blk.${il}.`;
      const hd = s.headDim;
      return [
        plan.norm(`${b}attn_norm.weight`, E),
        plan.mat(`${b}attn_q.weight`, E, s.nHead * hd),
        // Every layer has K/V (llama.cpp requires them); from layer 20 on they are unused.
        plan.mat(`${b}attn_k.weight`, E, s.nHeadKv * hd),
        plan.mat(`${b}attn_v.weight`, E, s.nHeadKv * hd),
        plan.mat(`${b}attn_output.weight`, s.nHead * hd, E),
        // Attention scale is 1: q/k norm weights around hd^(−1/4) keep random q·k near unit variance.
        plan.norm(`${b}attn_q_norm.weight`, hd, hd ** -0.25),
        plan.norm(`${b}attn_k_norm.weight`, hd, hd ** -0.25),
        plan.norm(`${b}post_attention_norm.weight`, E),
        plan.norm(`${b}ffn_norm.weight`, E),
        plan.mat(`${b}ffn_gate.weight`, E, s.nFf),
        plan.mat(`${b}ffn_up.weight`, E, s.nFf),
        plan.mat(`${b}ffn_down.weight`, s.nFf, E),
        plan.norm(`${b}post_ffw_norm.weight`, E),
        plan.mat(`${b}inp_gate.weight`, E, N_PL),
        plan.mat(`${b}proj.weight`, N_PL, E),
        plan.norm(`${b}post_norm.weight`, E),
        coef(`${b}altup_correct_coef.weight`, N, N),
        plan.norm(`${b}altup_correct_scale.weight`, E),
        coef(`${b}altup_predict_coef.weight`, N, N * N),
        // router · rmsNorm(x) / nEmbd: weights of std √nEmbd give modalities of unit scale before the tanh.
        { ...plan.router(`${b}altup_router.weight`, E, N), std: Math.sqrt(E) * extra(s, 'router', 1) },
        plan.norm(`${b}altup_router_norm.weight`, E),
        f32Mat(`${b}laurel_l.weight`, E, LAUREL_RANK),
        f32Mat(`${b}laurel_r.weight`, LAUREL_RANK, E),
        plan.norm(`${b}laurel_post_norm.weight`, E),
      ];
    };
    return [
      plan.embedding(s),
      { ...plan.stack('altup_proj.weight', E, E, N - 1), kind: 'conv' as const },
      { ...plan.stack('altup_unembd_proj.weight', E, E, N - 1), kind: 'conv' as const },
      plan.mat('per_layer_token_embd.weight', total, s.nVocab, 1 / Math.sqrt(N_PL)),
      f32Mat('per_layer_model_proj.weight', E, total),
      plan.norm('per_layer_proj_norm.weight', N_PL),
      ...Array.from({ length: s.nLayer }, (_, il) => block(il)).flat(),
      ...plan.head(s),
    ];
  },
};
