/**
 * What a random-weight model of each supported architecture contains: its shape (named presets or the arch fixture's
 * own dims), the tensor list with llama.cpp's names and ggml shapes, the weight scale of each tensor, and the type each
 * tensor gets for a requested quant (llama.cpp's fallbacks when a row is not a multiple of the block size).
 * Tensor names, metadata keys and layouts follow ../shared/models/arch/README.md (llama.cpp's loader).
 */

import { GgmlType, GGML_TYPES } from '../../src/gguf/types.js';

/** Architectures the fixture tool makes from their shared fixtures (the others: `archs/index.ts`). */
export const SYNTHETIC_ARCHES = ['llama', 'qwen2', 'qwen3', 'gemma2', 'gemma3', 'phi3'] as const;
/** One of SYNTHETIC_ARCHES. */
export type SyntheticArch = (typeof SYNTHETIC_ARCHES)[number];

/** Hyper-parameters that decide tensor shapes. */
export interface ModelShape {
  readonly nEmbd: number;
  readonly nHead: number;
  readonly nHeadKv: number;
  readonly headDim: number;
  readonly nFf: number;
  readonly nLayer: number;
  /** Vocabulary size; the template vocabulary is padded with unused tokens up to it (never trimmed). */
  readonly nVocab: number;
  /** Output matrix shared with token_embd (no output.weight). */
  readonly tied: boolean;
  /** An architecture's own knobs (`--shape n_expert=8,…`), read by its spec (`arch-spec.ts` `extra`). */
  readonly extra?: Readonly<Record<string, number>>;
}

/** Named shapes: benchmark-sized models and the arch fixtures' own dims ('tiny'). */
export const NAMED_SHAPES: Readonly<
  Record<string, { readonly arch: SyntheticArch; readonly shape: Partial<ModelShape> }>
> = {
  // Qwen2.5-0.5B: 494 M parameters, tied embeddings, QKV biases.
  'qwen2.5-0.5b': {
    arch: 'qwen2',
    shape: { nEmbd: 896, nHead: 14, nHeadKv: 2, headDim: 64, nFf: 4864, nLayer: 24, nVocab: 151936, tied: true },
  },
  // Llama-3.2-1B: 1.24 B parameters, tied embeddings, llama3 rope factors.
  'llama-3.2-1b': {
    arch: 'llama',
    shape: { nEmbd: 2048, nHead: 32, nHeadKv: 8, headDim: 64, nFf: 8192, nLayer: 16, nVocab: 128256, tied: true },
  },
  tiny: { arch: 'llama', shape: {} },
};

/** The ../shared/models/arch fixture whose metadata (tokenizer, rope, norms, soft-caps, windows) an arch starts from. */
export const TEMPLATE_FILE: Readonly<Record<SyntheticArch, string>> = {
  llama: 'llama3-f16.gguf',
  qwen2: 'qwen2-f16.gguf',
  qwen3: 'qwen3-f16.gguf',
  gemma2: 'gemma2-f16.gguf',
  gemma3: 'gemma3-f16.gguf',
  phi3: 'phi3-f16.gguf',
};

/** What kind of values a tensor holds (decides its random distribution and whether it is quantized). */
/**
 * 'router': a MoE router (`ffn_gate_inp`), kept F32 as llama.cpp's quantizer keeps it; 'conv': a depthwise
 * convolution kernel, kept F32 (llama-quant never quantizes `shortconv.conv`).
 */
export type TensorKind = 'matrix' | 'embedding' | 'output' | 'norm' | 'bias' | 'rope_freqs' | 'router' | 'conv';

/** One tensor to generate. */
export interface TensorPlan {
  readonly name: string;
  /** ggml order: shape[0] = row length. */
  readonly shape: readonly number[];
  readonly kind: TensorKind;
  /** Standard deviation of matrix/embedding/bias values; norms are 1 + std·N(0,1) around `center`. */
  readonly std: number;
  /** Mean of norm weights (1, or larger for gemma's post norms as the fixtures use). */
  readonly center: number;
}

/** Builds the tensor list of `arch` with `shape`, in the order llama.cpp's own files list them. */
export function planTensors(arch: SyntheticArch, s: ModelShape, withRopeFreqs: boolean): TensorPlan[] {
  const E = s.nEmbd;
  const qDim = s.nHead * s.headDim;
  const kvDim = s.nHeadKv * s.headDim;
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  const mat = (name: string, cols: number, rows: number): TensorPlan => ({
    name,
    shape: [cols, rows],
    kind: 'matrix',
    std: 1 / Math.sqrt(cols),
    center: 0,
  });
  const norm = (name: string, n: number, center = 1): TensorPlan => ({
    name,
    shape: [n],
    kind: 'norm',
    std: 0.1,
    center,
  });
  const bias = (name: string, n: number): TensorPlan => ({ name, shape: [n], kind: 'bias', std: 0.3, center: 0 });
  const out: TensorPlan[] = [];
  const embStd = gemma ? 0.06 : s.tied ? 2.5 / Math.sqrt(E) : 1;
  out.push({ name: 'token_embd.weight', shape: [E, s.nVocab], kind: 'embedding', std: embStd, center: 0 });
  if (withRopeFreqs)
    out.push({ name: 'rope_freqs.weight', shape: [s.headDim / 2], kind: 'rope_freqs', std: 0, center: 0 });
  for (let il = 0; il < s.nLayer; il++) {
    const b = `blk.${il}.`;
    out.push(norm(`${b}attn_norm.weight`, E));
    if (arch === 'phi3') {
      out.push(mat(`${b}attn_qkv.weight`, E, qDim + 2 * kvDim));
    } else {
      out.push(
        mat(`${b}attn_q.weight`, E, qDim),
        mat(`${b}attn_k.weight`, E, kvDim),
        mat(`${b}attn_v.weight`, E, kvDim),
      );
      if (arch === 'qwen2')
        out.push(bias(`${b}attn_q.bias`, qDim), bias(`${b}attn_k.bias`, kvDim), bias(`${b}attn_v.bias`, kvDim));
      if (arch === 'qwen3' || arch === 'gemma3')
        out.push(norm(`${b}attn_q_norm.weight`, s.headDim), norm(`${b}attn_k_norm.weight`, s.headDim));
    }
    out.push(mat(`${b}attn_output.weight`, qDim, E));
    if (gemma) out.push(norm(`${b}post_attention_norm.weight`, E, 4.5));
    out.push(norm(`${b}ffn_norm.weight`, E));
    if (arch === 'phi3') {
      out.push(mat(`${b}ffn_up.weight`, E, 2 * s.nFf));
    } else {
      out.push(mat(`${b}ffn_gate.weight`, E, s.nFf), mat(`${b}ffn_up.weight`, E, s.nFf));
    }
    out.push(mat(`${b}ffn_down.weight`, s.nFf, E));
    if (gemma) out.push(norm(`${b}post_ffw_norm.weight`, E, 4.5));
  }
  out.push(norm('output_norm.weight', E, gemma ? 3.5 : 1));
  if (!s.tied)
    out.push({ name: 'output.weight', shape: [E, s.nVocab], kind: 'output', std: 2.5 / Math.sqrt(E), center: 0 });
  return out;
}

/** llama_ftype number of a uniform quant (general.file_type). */
export const FILE_TYPE: Readonly<Partial<Record<GgmlType, number>>> = {
  [GgmlType.F32]: 0,
  [GgmlType.F16]: 1,
  [GgmlType.Q4_0]: 2,
  [GgmlType.Q4_1]: 3,
  [GgmlType.Q8_0]: 7,
  [GgmlType.Q5_0]: 8,
  [GgmlType.Q5_1]: 9,
  [GgmlType.Q2_K]: 10,
  [GgmlType.Q3_K]: 12,
  [GgmlType.Q4_K]: 15,
  [GgmlType.Q5_K]: 17,
  [GgmlType.Q6_K]: 18,
  [GgmlType.IQ2_XXS]: 19,
  [GgmlType.IQ2_XS]: 20,
  [GgmlType.IQ3_XXS]: 23,
  [GgmlType.IQ1_S]: 24,
  [GgmlType.IQ4_NL]: 25,
  [GgmlType.IQ3_S]: 26,
  [GgmlType.IQ2_S]: 29, // LLAMA_FTYPE_MOSTLY_IQ2_M: IQ2_S is its default type (MOSTLY_IQ2_S = 28 defaults to IQ2_XS)
  [GgmlType.IQ4_XS]: 30,
  [GgmlType.IQ1_M]: 31,
  [GgmlType.BF16]: 32,
  [GgmlType.MXFP4]: 38, // LLAMA_FTYPE_MOSTLY_MXFP4_MOE
};

/** llama.cpp's replacement when a row does not fit a type's blocks (llama-quant.cpp fallback). */
const FALLBACK: Readonly<Partial<Record<GgmlType, GgmlType>>> = {
  // The 256-element IQ codebook types fall back to the 32-element IQ4_NL; MXFP4 (32) has none, so it becomes F16.
  [GgmlType.IQ1_S]: GgmlType.IQ4_NL,
  [GgmlType.IQ1_M]: GgmlType.IQ4_NL,
  [GgmlType.IQ2_XXS]: GgmlType.IQ4_NL,
  [GgmlType.IQ2_XS]: GgmlType.IQ4_NL,
  [GgmlType.IQ2_S]: GgmlType.IQ4_NL,
  [GgmlType.IQ3_XXS]: GgmlType.IQ4_NL,
  [GgmlType.IQ3_S]: GgmlType.IQ4_NL,
  [GgmlType.Q2_K]: GgmlType.IQ4_NL,
  [GgmlType.Q3_K]: GgmlType.IQ4_NL,
  [GgmlType.IQ4_XS]: GgmlType.IQ4_NL,
  [GgmlType.Q4_K]: GgmlType.Q5_0,
  [GgmlType.Q5_K]: GgmlType.Q5_1,
  [GgmlType.Q6_K]: GgmlType.Q8_0,
};

/**
 * Type of one tensor for a requested quant: 1-D tensors and biases stay F32; a matrix whose row is not whole blocks falls back as
 * llama.cpp does (then to F16). `embedType` overrides the token embedding (and output) type when given.
 */
export function tensorType(plan: TensorPlan, quant: GgmlType, embedType: GgmlType | undefined): GgmlType {
  if (plan.shape.length === 1 || plan.kind === 'router' || plan.kind === 'conv' || plan.kind === 'bias') {
    return GgmlType.F32; // biases stay F32 at any rank (gpt-oss's per-expert [rows, n_expert] ones)
  }
  let t = (plan.kind === 'embedding' || plan.kind === 'output') && embedType !== undefined ? embedType : quant;
  const row = plan.shape[0]!;
  for (let guard = 0; guard < 4; guard++) {
    const info = GGML_TYPES.get(t)!;
    if (row % info.blockElements === 0) return t;
    t = FALLBACK[t] ?? GgmlType.F16;
  }
  return GgmlType.F16;
}

/**
 * llama3 rope frequency factors (llama.cpp converter formula): one per rotary pair, 1 for high frequencies, `factor`
 * for low ones, smoothly interpolated between.
 */
export function llama3RopeFreqs(
  headDim: number,
  base: number,
  factor: number,
  lowFreqFactor: number,
  highFreqFactor: number,
  originalContext: number,
): Float32Array {
  const out = new Float32Array(headDim / 2);
  const lowWavelen = originalContext / lowFreqFactor;
  const highWavelen = originalContext / highFreqFactor;
  for (let i = 0; i < headDim / 2; i++) {
    const freq = 1 / Math.pow(base, (2 * i) / headDim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = factor;
    else {
      const smooth = (originalContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}
