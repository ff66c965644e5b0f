/**
 * How the fixture tool describes an architecture it generates from scratch (every architecture added after the first
 * six): a default shape, its hyper-parameter keys and its tensor list with llama.cpp's names and ggml shapes. The
 * tokenizer comes from a shared fixture (stories260K's 512-token SentencePiece vocabulary by default, so references
 * stay small); every `<arch>.*` key is written from the shape and the spec, never copied from another architecture.
 * A new architecture is one file in `archs/` plus one line in `archs/index.ts`.
 */

import { GgufValueType, type GgufValue, type GgufValueTypeInfo } from '../../src/gguf/types.js';
import type { ModelShape, TensorPlan } from './arch-plan.js';

/** One metadata value with its GGUF type (llama.cpp checks key types strictly: a float key must be FLOAT32). */
export interface MetadataEntry {
  readonly value: GgufValue;
  readonly type: GgufValueTypeInfo;
}

/** Metadata keys of a spec; `null` removes a standard key. */
export type SpecMetadata = Readonly<Record<string, MetadataEntry | null>>;

/** An architecture the fixture tool writes from scratch. */
export interface SyntheticArchSpec {
  /** `general.architecture`. */
  readonly name: string;
  /** File under ../shared/models whose `tokenizer.*` keys the model takes (default 'stories260K.gguf'). */
  readonly tokenizer?: string;
  /** The default shape (`--shape k=v` overrides it); `extra` holds the architecture's own knobs (experts, …). */
  readonly shape: ModelShape;
  /** Named shapes over `shape` (benchmark-sized models, e.g. 'lfm2-1.2b'); the vocabulary is padded up to nVocab. */
  readonly namedShapes?: Readonly<Record<string, Partial<ModelShape>>>;
  /** Keys beyond the standard ones written for every spec (see `standardMetadata`), or overriding them. */
  metadata(s: ModelShape): SpecMetadata;
  /** Every tensor, in the order llama.cpp's converter writes them. */
  tensors(s: ModelShape): TensorPlan[];
  /** An encoder without an lm head (bert): recorded with embeddings only (`--embedding`), no logits reference. */
  readonly embeddingOnly?: boolean;
}

const scalar = (type: Exclude<GgufValueType, GgufValueType.ARRAY>): GgufValueTypeInfo => ({ type });

/** A UINT32 key. */
export const u32 = (value: number): MetadataEntry => ({ value, type: scalar(GgufValueType.UINT32) });
/** A FLOAT32 key. */
export const f32 = (value: number): MetadataEntry => ({ value, type: scalar(GgufValueType.FLOAT32) });
/** A BOOL key. */
export const bool = (value: boolean): MetadataEntry => ({ value, type: scalar(GgufValueType.BOOL) });
/** A STRING key. */
export const str = (value: string): MetadataEntry => ({ value, type: scalar(GgufValueType.STRING) });
/** An array of UINT32 (per-layer counts). */
export const u32Array = (values: readonly number[]): MetadataEntry => ({
  value: Uint32Array.from(values),
  type: { type: GgufValueType.ARRAY, element: scalar(GgufValueType.UINT32) },
});
/** An array of FLOAT32. */
export const f32Array = (values: readonly number[]): MetadataEntry => ({
  value: Float32Array.from(values),
  type: { type: GgufValueType.ARRAY, element: scalar(GgufValueType.FLOAT32) },
});
/** An array of BOOL (per-layer flags). */
export const boolArray = (values: readonly boolean[]): MetadataEntry => ({
  value: [...values],
  type: { type: GgufValueType.ARRAY, element: scalar(GgufValueType.BOOL) },
});

/** The keys every spec gets, from its shape (a spec may override or remove them). */
export function standardMetadata(name: string, s: ModelShape): Record<string, MetadataEntry> {
  const k = (key: string): string => `${name}.${key}`;
  return {
    [k('context_length')]: u32(2048),
    [k('embedding_length')]: u32(s.nEmbd),
    [k('block_count')]: u32(s.nLayer),
    [k('feed_forward_length')]: u32(s.nFf),
    [k('attention.head_count')]: u32(s.nHead),
    [k('attention.head_count_kv')]: u32(s.nHeadKv),
    [k('attention.key_length')]: u32(s.headDim),
    [k('attention.value_length')]: u32(s.headDim),
    [k('rope.dimension_count')]: u32(s.headDim),
    [k('rope.freq_base')]: f32(10000),
    [k('attention.layer_norm_rms_epsilon')]: f32(1e-5),
    // `--shape attn_factor=X`: llama.cpp's rope attention factor (every rope the arch passes attn_factor to)
    ...(s.extra?.attn_factor !== undefined ? { [k('rope.scaling.attn_factor')]: f32(s.extra.attn_factor) } : {}),
  };
}

/** A shape knob of `extra`, or `fallback`. */
export function extra(s: ModelShape, key: string, fallback: number): number {
  return s.extra?.[key] ?? fallback;
}

/** Tensor builders with the scales the first six architectures' fixtures use (keeps logits well-conditioned). */
export const plan = {
  /** A weight matrix of `rows` outputs over `cols` inputs (ggml shape [cols, rows]). */
  mat: (name: string, cols: number, rows: number, std = 1 / Math.sqrt(cols)): TensorPlan => ({
    name,
    shape: [cols, rows],
    kind: 'matrix',
    std,
    center: 0,
  }),
  /** A 3-D stack of `n` matrices (experts): ggml shape [cols, rows, n]. */
  stack: (name: string, cols: number, rows: number, n: number): TensorPlan => ({
    name,
    shape: [cols, rows, n],
    kind: 'matrix',
    std: 1 / Math.sqrt(cols),
    center: 0,
  }),
  /** A MoE router `ffn_gate_inp` [cols, nExperts] (F32; logits of std 2 for routing margins well above rounding). */
  router: (name: string, cols: number, nExperts: number): TensorPlan => ({
    name,
    shape: [cols, nExperts],
    kind: 'router',
    std: 2 / Math.sqrt(cols),
    center: 0,
  }),
  /** A norm weight around `center`. */
  norm: (name: string, n: number, center = 1): TensorPlan => ({ name, shape: [n], kind: 'norm', std: 0.1, center }),
  /** A bias. */
  bias: (name: string, n: number, std = 0.3): TensorPlan => ({ name, shape: [n], kind: 'bias', std, center: 0 }),
  /** token_embd.weight. */
  embedding: (s: ModelShape): TensorPlan => ({
    name: 'token_embd.weight',
    shape: [s.nEmbd, s.nVocab],
    kind: 'embedding',
    std: s.tied ? 2.5 / Math.sqrt(s.nEmbd) : 1,
    center: 0,
  }),
  /** output_norm.weight, then output.weight unless tied. */
  head: (s: ModelShape, normCenter = 1): TensorPlan[] => [
    { name: 'output_norm.weight', shape: [s.nEmbd], kind: 'norm', std: 0.1, center: normCenter },
    ...(s.tied
      ? []
      : [
          {
            name: 'output.weight',
            shape: [s.nEmbd, s.nVocab],
            kind: 'output' as const,
            std: 2.5 / Math.sqrt(s.nEmbd),
            center: 0,
          },
        ]),
  ],
  /** llama's block: attn_norm, q/k/v/o, ffn_norm, gate/up/down (options add biases and per-head q/k norms). */
  llamaBlock: (s: ModelShape, il: number, o: { qkvBias?: boolean; qkNorm?: boolean } = {}): TensorPlan[] => {
    const b = `blk.${il}.`;
    const qDim = s.nHead * s.headDim;
    const kvDim = s.nHeadKv * s.headDim;
    return [
      plan.norm(`${b}attn_norm.weight`, s.nEmbd),
      plan.mat(`${b}attn_q.weight`, s.nEmbd, qDim),
      plan.mat(`${b}attn_k.weight`, s.nEmbd, kvDim),
      plan.mat(`${b}attn_v.weight`, s.nEmbd, kvDim),
      ...(o.qkvBias
        ? [plan.bias(`${b}attn_q.bias`, qDim), plan.bias(`${b}attn_k.bias`, kvDim), plan.bias(`${b}attn_v.bias`, kvDim)]
        : []),
      ...(o.qkNorm
        ? [plan.norm(`${b}attn_q_norm.weight`, s.headDim), plan.norm(`${b}attn_k_norm.weight`, s.headDim)]
        : []),
      plan.mat(`${b}attn_output.weight`, qDim, s.nEmbd),
      plan.norm(`${b}ffn_norm.weight`, s.nEmbd),
      plan.mat(`${b}ffn_gate.weight`, s.nEmbd, s.nFf),
      plan.mat(`${b}ffn_up.weight`, s.nEmbd, s.nFf),
      plan.mat(`${b}ffn_down.weight`, s.nFf, s.nEmbd),
    ];
  },
};

/** The default small shape new specs start from (head size 64, GQA 2, two layers… as a spec chooses). */
export const SMALL_SHAPE: ModelShape = {
  nEmbd: 256,
  nHead: 4,
  nHeadKv: 2,
  headDim: 64,
  nFf: 640,
  nLayer: 4,
  nVocab: 512,
  tied: false,
};
