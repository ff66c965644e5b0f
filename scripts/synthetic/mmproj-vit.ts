/**
 * The ViT trunk of a random-weight `mmproj` GGUF, shared by the per-projector generators (mmproj-<type>.ts): patch
 * embedding, position embeddings, optional pre-LN, the blocks and the post-LN, with llama.cpp's tensor names and keys,
 * drawn in a fixed order from one mulberry32 stream so a shape and seed always make the same bytes.
 */

import { GgmlType, type GgufValue } from '../../src/gguf/types.js';
import { writeF16 } from '../../src/quant/half.js';
import { layerTensorName, type VISION_LAYER_TENSORS, VISION_TENSORS } from '../../src/vision/tensor-names.js';

/** The encoder's shape. */
export interface VitShape {
  readonly imageSize: number;
  readonly patchSize: number;
  readonly nEmbd: number;
  readonly nHeads: number;
  readonly nFf: number;
  readonly nLayers: number;
  /** Output width: the text model's n_embd. */
  readonly nEmbdText: number;
  readonly merge: number;
  /** Type of the matrices (patch kernel, attention, FFN, projection) as published mmproj files store them; default F32. */
  readonly matrices?: 'f32' | 'f16';
  /** Adds `v.pre_ln.*` (a LayerNorm before the first block, which llama.cpp applies when present). */
  readonly preLn?: boolean;
  /** Stores each FFN's up matrix under `ffn_down` and down under `ffn_up`, as early gemma3 conversions did. */
  readonly swappedFfn?: boolean;
  /** CLIP-style trunk (llava): no patch bias, no post-LN. */
  readonly clip?: boolean;
  /**
   * Metadata as a sweep variant differs from the generator's: a value replaces the key, `null` removes it; a number
   * array is stored as i32 when every entry is an integer, else f32.
   */
  readonly keys?: Readonly<Record<string, number | boolean | string | readonly number[] | null>>;
  /** Tensors left out of the file (regular expressions over the names), as real files lack optional ones. */
  readonly omit?: readonly string[];
}

export interface SyntheticTensor {
  name: string;
  type: GgmlType;
  shape: number[];
  data: Uint8Array;
}

/** Appends random tensors to `tensors`, matrices in the shape's type. */
export function tensorAdder(rand: () => number, shape: VitShape, tensors: SyntheticTensor[]) {
  /** A tensor of uniform values in [center − spread, center + spread]. */
  return (name: string, dims: number[], spread: number, center = 0): void => {
    const n = dims.reduce((a, b) => a * b, 1);
    const v = new Float32Array(n);
    for (let i = 0; i < n; i++) v[i] = center + (rand() * 2 - 1) * spread;
    if (shape.matrices === 'f16' && dims.length >= 2 && name !== VISION_TENSORS.positionEmbd) {
      const h = new Uint8Array(n * 2);
      for (let i = 0; i < n; i++) writeF16(h, i * 2, v[i]);
      tensors.push({ name, type: GgmlType.F16, shape: dims, data: h });
    } else {
      tensors.push({ name, type: GgmlType.F32, shape: dims, data: new Uint8Array(v.buffer) });
    }
  };
}

/** Adds the trunk's tensors: patch embedding … post-LN. `nPatches`: rows of the position table. */
export function addVitTensors(add: ReturnType<typeof tensorAdder>, shape: VitShape, nPatches: number): void {
  const { patchSize: p, nEmbd: d, nFf: f } = shape;
  const T = VISION_TENSORS;
  add(T.patchEmbd, [p, p, 3, d], 1 / Math.sqrt(3 * p * p));
  if (!shape.clip) add(T.patchBias, [d], 0.1);
  add(T.positionEmbd, [d, nPatches], 0.5);
  if (shape.preLn) {
    add(T.preLnWeight, [d], 0.2, 1);
    add(T.preLnBias, [d], 0.1);
  }
  for (let il = 0; il < shape.nLayers; il++) {
    const W = (k: keyof typeof VISION_LAYER_TENSORS, dims: number[], spread: number) =>
      add(layerTensorName(k, il, 'weight'), dims, spread);
    const B = (k: keyof typeof VISION_LAYER_TENSORS, n: number, spread: number, center = 0) =>
      add(layerTensorName(k, il, 'bias'), [n], spread, center);
    add(layerTensorName('ln1', il, 'weight'), [d], 0.2, 1);
    B('ln1', d, 0.1);
    for (const k of ['attnQ', 'attnK', 'attnV', 'attnOut'] as const) {
      W(k, [d, d], 1 / Math.sqrt(d));
      B(k, d, 0.1);
    }
    add(layerTensorName('ln2', il, 'weight'), [d], 0.2, 1);
    B('ln2', d, 0.1);
    const [up, down] = shape.swappedFfn ? (['ffnDown', 'ffnUp'] as const) : (['ffnUp', 'ffnDown'] as const);
    W(up, [d, f], 1 / Math.sqrt(d));
    B(up, f, 0.1);
    W(down, [f, d], 1 / Math.sqrt(f));
    B(down, d, 0.1);
  }
  if (shape.clip) return;
  add(T.postLnWeight, [d], 0.2, 1);
  add(T.postLnBias, [d], 0.1);
}

/** `metadata` with the shape's `keys` applied (the generators' last step). */
export function withKeys(metadata: Record<string, GgufValue>, shape: VitShape): Record<string, GgufValue> {
  for (const [key, v] of Object.entries(shape.keys ?? {})) {
    if (v === null) delete metadata[key];
    else if (typeof v === 'object')
      metadata[key] = v.every(Number.isInteger) ? Int32Array.from(v) : Float32Array.from(v);
    else metadata[key] = v;
  }
  return metadata;
}

/** `tensors` without the shape's `omit` ones (drawn all the same, so the others keep their values). */
export function withoutOmitted(tensors: SyntheticTensor[], shape: VitShape): SyntheticTensor[] {
  const omit = (shape.omit ?? []).map((r) => new RegExp(`^${r}$`));
  return tensors.filter((t) => !omit.some((r) => r.test(t.name)));
}

/** The `clip.*` keys of the trunk (GELU MLP, eps 1e-6, fixed mean/std). */
export function vitMetadata(projector: string, seed: number, shape: VitShape): Record<string, GgufValue> {
  return {
    'general.architecture': 'clip',
    'general.name': `synthetic ${projector} mmproj s${seed}`,
    'clip.has_vision_encoder': true,
    'clip.projector_type': projector,
    'clip.use_gelu': true,
    'clip.vision.image_size': shape.imageSize,
    'clip.vision.patch_size': shape.patchSize,
    'clip.vision.embedding_length': shape.nEmbd,
    'clip.vision.feed_forward_length': shape.nFf,
    'clip.vision.block_count': shape.nLayers,
    'clip.vision.projection_dim': shape.nEmbdText,
    'clip.vision.attention.head_count': shape.nHeads,
    'clip.vision.attention.layer_norm_epsilon': 1e-6,
    'clip.vision.image_mean': new Float32Array([0.5, 0.45, 0.4]),
    'clip.vision.image_std': new Float32Array([0.5, 0.27, 0.3]),
  };
}
