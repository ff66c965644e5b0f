/**
 * Tensor names of an mmproj file's vision encoder and projector, as llama.cpp writes them (`tools/mtmd/clip-impl.h`
 * `TN_*`), kept as data: the loader asks this table for a name, never formats one inline. `{il}` is the layer index.
 */

/** Encoder-wide tensors (prefix `v.`) and the gemma3 projector's (`mm.`). */
export const VISION_TENSORS = {
  /** Patch embedding conv kernel, ggml [patch, patch, 3, n_embd]. */
  patchEmbd: 'v.patch_embd.weight',
  /** [n_embd] */
  patchBias: 'v.patch_embd.bias',
  /** [n_embd, n_patches] (+ 1 row for the class token when there is one) */
  positionEmbd: 'v.position_embd.weight',
  /** CLIP's class token (llava), [n_embd]. */
  classEmbd: 'v.class_embd',
  preLnWeight: 'v.pre_ln.weight',
  preLnBias: 'v.pre_ln.bias',
  postLnWeight: 'v.post_ln.weight',
  postLnBias: 'v.post_ln.bias',
  /** gemma3: ggml [n_embd_text, n_embd] — used transposed (out = xᵀ·W). */
  inputProjection: 'mm.input_projection.weight',
  /** gemma3: RMSNorm weight [n_embd] applied before the projection. */
  softEmbNorm: 'mm.soft_emb_norm.weight',
} as const;

/** Per-layer tensors of a ViT block; each has `.weight` and, where present, `.bias`. */
export const VISION_LAYER_TENSORS = {
  ln1: 'v.blk.{il}.ln1',
  attnQ: 'v.blk.{il}.attn_q',
  attnK: 'v.blk.{il}.attn_k',
  attnV: 'v.blk.{il}.attn_v',
  /** Q|K|V fused (qwen3vl): ggml [d, 3d] */
  attnQkv: 'v.blk.{il}.attn_qkv',
  attnOut: 'v.blk.{il}.attn_out',
  ln2: 'v.blk.{il}.ln2',
  ffnUp: 'v.blk.{il}.ffn_up',
  ffnDown: 'v.blk.{il}.ffn_down',
  /** pixtral's gated FFN */
  ffnGate: 'v.blk.{il}.ffn_gate',
  /** gemma4v: per-head RMS norms of Q and K, post-attention / post-FFN norms, a scalar output scale */
  attnQNorm: 'v.blk.{il}.attn_q_norm',
  attnKNorm: 'v.blk.{il}.attn_k_norm',
  attnPostNorm: 'v.blk.{il}.attn_post_norm',
  ffnPostNorm: 'v.blk.{il}.ffn_post_norm',
  outScale: 'v.blk.{il}.out_scale',
} as const;

/** The name of a layer tensor: `layerTensorName('attnQ', 3, 'bias')` → `v.blk.3.attn_q.bias`. */
export function layerTensorName(kind: keyof typeof VISION_LAYER_TENSORS, il: number, part: 'weight' | 'bias'): string {
  return `${VISION_LAYER_TENSORS[kind].replace('{il}', String(il))}.${part}`;
}
