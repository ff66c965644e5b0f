/**
 * Pooling of a sequence's final hidden states into one embedding, with llama.cpp's semantics (llama-graph.cpp
 * `build_pooling`, `llm_graph_input_cls`): 'mean' averages every row, 'cls' takes the first, 'last' the last.
 * It runs on the hidden states read back from the backend (`Transformer.hiddenStates`): pooling is O(tokens·n_embd)
 * against the forward pass's O(tokens·params), so one implementation serves every backend with identical results.
 * Then the optional L2 normalisation and Matryoshka truncation (`dimensions`, re-normalised) of the API.
 */

import { geluF16Table } from '../backend/host-encoder-ops.js';
import { LlmError } from '../errors.js';
import { f32ToF16Bits } from '../quant/half.js';
import type { PoolingType } from './config.js';

/**
 * One vector from `hidden` ([nTokens, nEmbd] row-major, after the output norm) by `pooling`. 'none' and 'rank'
 * have no single-vector meaning here and are refused (`invalid-request`).
 */
export function poolHiddenStates(
  hidden: Float32Array,
  nTokens: number,
  nEmbd: number,
  pooling: PoolingType,
): Float32Array {
  if (!(nTokens > 0) || hidden.length < nTokens * nEmbd) {
    throw new LlmError('invalid-request', `pooling: ${nTokens} rows of ${nEmbd} do not fit ${hidden.length} values`);
  }
  switch (pooling) {
    case 'cls':
      return hidden.slice(0, nEmbd);
    case 'last':
      return hidden.slice((nTokens - 1) * nEmbd, nTokens * nEmbd);
    case 'mean': {
      const sum = new Float64Array(nEmbd); // [nEmbd] accumulated in f64, rounded once
      for (let t = 0; t < nTokens; t++) {
        const row = t * nEmbd;
        for (let j = 0; j < nEmbd; j++) sum[j] += hidden[row + j]!;
      }
      const out = new Float32Array(nEmbd); // [nEmbd]
      for (let j = 0; j < nEmbd; j++) out[j] = sum[j]! / nTokens;
      return out;
    }
    default:
      throw new LlmError(
        'invalid-request',
        `embeddings: this model's pooling type is '${pooling}', which gives no sentence embedding; ` +
          'use an embedding model (pooling mean, cls or last)',
        { details: { pooling } },
      );
  }
}

/**
 * The first `dimensions` values of `v` (Matryoshka truncation; all when undefined), scaled to unit L2 norm when
 * `normalize` (a zero vector stays zero, as llama.cpp's `common_embd_normalize`).
 */
export function finishEmbedding(v: Float32Array, dimensions: number | undefined, normalize: boolean): Float32Array {
  const out = dimensions === undefined ? v.slice() : v.slice(0, dimensions); // [dimensions]
  if (!normalize) return out;
  let ss = 0;
  for (let i = 0; i < out.length; i++) ss += out[i]! * out[i]!;
  const norm = Math.sqrt(ss);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = out[i]! / norm;
  return out;
}

/**
 * The classifier of a `rank`-pooling model (a reranker), kept on the host: llama.cpp's `build_pooling` — the pooled
 * row, an optional dense `cls` layer (+ bias, then tanh; GELU and a LayerNorm for modern-bert), then `cls_out`
 * (+ bias) when the file has one, then a softmax for qwen3 (Qwen3-Reranker: P(yes), P(no)). `lastToken`: qwen3 pools
 * the last token for 'rank', `meanPool`: modern-bert the mean of every row, other architectures the first.
 */
export interface RankHead {
  /** `cls.output` ([nOut, nEmbd], ggml shape [nEmbd, nOut]), or null for a head that ends at `dense`. */
  readonly weight: Float32Array | null;
  readonly bias: Float32Array | null; // [nOut]
  readonly nOut: number;
  readonly lastToken: boolean;
  readonly meanPool?: boolean;
  readonly softmax: boolean;
  /**
   * BERT-style rerankers (bge-reranker): a dense `cls` layer before `cls.output`, row = tanh(cls · row + cls.bias)
   * (RoBERTa's classification head; jina-reranker-v1's whole head, one output, when there is no `cls.output`);
   * modern-bert (gte-reranker-modernbert): row = LayerNorm(gelu(cls · row)) · `cls.norm`. Absent or null otherwise.
   */
  readonly dense?: {
    readonly weight: Float32Array; // [nDense, nEmbd]
    readonly bias: Float32Array | null; // [nDense]
    readonly gelu?: boolean;
    readonly norm?: { readonly weight: Float32Array; readonly eps: number } | null; // [nDense]
  } | null;
}

/** ggml's CPU GELU of one value (GGML_GELU_FP16: the f16 table; 0 below −10, x above 10). */
function geluF16(v: number): number {
  return v <= -10 ? 0 : v >= 10 ? v : geluF16Table()[f32ToF16Bits(v)]!;
}

/** The rank head's outputs for one sequence's hidden states ([nTokens, nEmbd]); element 0 is the relevance score. */
export function rankOutputs(hidden: Float32Array, nTokens: number, nEmbd: number, head: RankHead): Float32Array {
  let row = poolHiddenStates(hidden, nTokens, nEmbd, head.meanPool ? 'mean' : head.lastToken ? 'last' : 'cls'); // [nEmbd]
  let width = nEmbd;
  if (head.dense) {
    const nDense = head.dense.weight.length / width;
    const pre = new Float32Array(nDense); // [nDense] act(cls · row + cls.bias)
    for (let o = 0; o < nDense; o++) {
      let dot = 0;
      for (let j = 0; j < width; j++) dot += head.dense.weight[o * width + j]! * row[j]!;
      const v = Math.fround(dot + (head.dense.bias?.[o] ?? 0));
      pre[o] = head.dense.gelu ? geluF16(v) : Math.tanh(v);
    }
    const norm = head.dense.norm;
    if (norm) {
      let mean = 0;
      for (let j = 0; j < nDense; j++) mean += pre[j]!;
      mean /= nDense;
      let ss = 0;
      for (let j = 0; j < nDense; j++) ss += (pre[j]! - mean) ** 2;
      const inv = 1 / Math.sqrt(ss / nDense + norm.eps);
      for (let j = 0; j < nDense; j++) pre[j] = (pre[j]! - mean) * inv * norm.weight[j]!;
    }
    row = pre;
    width = nDense;
  }
  if (!head.weight) return row;
  const out = new Float32Array(head.nOut); // [nOut]
  for (let o = 0; o < head.nOut; o++) {
    let dot = 0;
    for (let j = 0; j < width; j++) dot += head.weight[o * width + j]! * row[j]!;
    out[o] = dot + (head.bias?.[o] ?? 0);
  }
  if (head.softmax) {
    const max = Math.max(...out);
    let sum = 0;
    for (let o = 0; o < out.length; o++) sum += out[o] = Math.exp(out[o]! - max);
    for (let o = 0; o < out.length; o++) out[o] = out[o]! / sum;
  }
  return out;
}

/** Dense layers applied to the pooled vector (EmbeddingGemma; `dense-head.ts`): dense3 · (dense2 · v + bias). */
export interface PooledProjection {
  readonly dense2: Float32Array; // [mid, nEmbd]
  readonly dense2Bias: Float32Array | null; // [mid]
  readonly dense3: Float32Array; // [nEmbd, mid]
  readonly mid: number;
}

/** `v` ([nEmbd]) through the model's pooled-vector head, or `v` itself when it has none. */
export function projectPooled(v: Float32Array, head: PooledProjection | null | undefined): Float32Array {
  if (!head) return v;
  const n = v.length;
  const h = new Float32Array(head.mid); // [mid]
  for (let o = 0; o < head.mid; o++) {
    let dot = 0;
    for (let j = 0; j < n; j++) dot += head.dense2[o * n + j]! * v[j]!;
    h[o] = dot + (head.dense2Bias?.[o] ?? 0);
  }
  const out = new Float32Array(n); // [nEmbd]
  for (let o = 0; o < n; o++) {
    let dot = 0;
    for (let j = 0; j < head.mid; j++) dot += head.dense3[o * head.mid + j]! * h[j]!;
    out[o] = dot;
  }
  return out;
}
