/**
 * Token sampling in llama.cpp's order: logit bias → repetition / frequency / presence penalties over the last N
 * tokens → top-k → top-p → min-p → temperature → a draw from a seeded RNG; greedy at temperature 0. Reads as little
 * as it can from the backend: 4 bytes (argmax) for plain greedy, k candidates (backend top-k) when neither bias nor
 * penalties need the whole row, the full logits otherwise — and every route gives the same token for the same seed.
 */

import type { TopK } from '../backend/ops.js';
import { createRng, type Rng } from './rng.js';

/** Sampling settings of one request (llama.cpp names in comments). */
export interface SamplingParams {
  /** `temp`; 0 (or less) is greedy. */
  readonly temperature: number;
  /** `top_k`; 0 disables. */
  readonly topK: number;
  /** `top_p`; 1 disables. */
  readonly topP: number;
  /** `min_p`; 0 disables. */
  readonly minP: number;
  /** `repeat_penalty`; 1 disables. */
  readonly repetitionPenalty: number;
  /** `frequency_penalty`: subtracted once per earlier occurrence; 0 disables. */
  readonly frequencyPenalty: number;
  /** `presence_penalty`: subtracted once if the token occurred; 0 disables. */
  readonly presencePenalty: number;
  /** `repeat_last_n`: how many of the latest tokens the penalties look at; -1 = all of them, 0 disables. */
  readonly penaltyLastN: number;
  /** Added to a token's logit before anything else (OpenAI `logit_bias`). */
  readonly logitBias: ReadonlyMap<number, number> | null;
  /** Seed of the draw; the same seed, model and request give the same tokens. */
  readonly seed: number;
}

/** llama.cpp server defaults (`common_params_sampling`). */
export const DEFAULT_SAMPLING: Omit<SamplingParams, 'seed'> = {
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repetitionPenalty: 1,
  frequencyPenalty: 0,
  presencePenalty: 0,
  penaltyLastN: 64,
  logitBias: null,
};

/** Largest k asked of the backend's top-k; bigger k reads the whole row instead. */
const MAX_BACKEND_TOP_K = 128;

/** Where the logits of the last evaluated token live (a `Transformer` satisfies this). */
export interface LogitSource {
  readLogits(): Promise<Float32Array>;
  argmax(): Promise<number>;
  topK(k: number): Promise<TopK>;
}

/** A candidate list: `n` entries of `ids` / `logits`, sorted by logit descending (ties: lower id first). */
export interface Candidates {
  ids: Int32Array;
  logits: Float64Array;
  n: number;
}

/** How a sampler reads the backend for each token (for stats and tests). */
export type ReadbackRoute = 'argmax' | 'top-k' | 'full';

/** Samples tokens for one request; holds the request's RNG. */
export class Sampler {
  readonly params: SamplingParams;
  readonly route: ReadbackRoute;
  private readonly rng: Rng;

  /** The raw logit row of the last `sample` call on the full-row route (before bias and penalties), else null. */
  lastRow: Float32Array | null = null;

  /**
   * `vocabSize`, when given, keeps a top-k of the whole vocabulary (no truncation) on the full-row route.
   * `options.fullRow` forces the full-row route (log-probabilities and token masks need the whole row); the token
   * drawn is the same on every route.
   */
  constructor(params: SamplingParams, vocabSize = Infinity, options: { readonly fullRow?: boolean } = {}) {
    this.params = params;
    this.rng = createRng(params.seed);
    const needsRow = hasBias(params) || hasPenalties(params) || options.fullRow === true;
    if (needsRow) this.route = 'full';
    else if (params.temperature <= 0 || params.topK === 1) this.route = 'argmax';
    else if (params.topK > 0 && params.topK <= MAX_BACKEND_TOP_K && params.topK < vocabSize) this.route = 'top-k';
    else this.route = 'full';
  }

  /** Picks the next token from `source`; `history` is every token of the sequence so far (prompt included). */
  async sample(source: LogitSource, history: readonly number[], mask?: TokenMask): Promise<number> {
    if (this.route === 'argmax' && !mask) return source.argmax();
    if (this.route === 'top-k' && !mask) {
      const top = await source.topK(this.params.topK);
      return sampleCandidates(candidatesFromTopK(top), this.params, this.rng);
    }
    const row = await source.readLogits();
    this.lastRow = row;
    return sampleLogits(row, this.params, history, this.rng, mask);
  }
}

/**
 * Which tokens may come next (a grammar's bitmask): bit `id & 31` of word `id >> 5` set = allowed. Tokens beyond
 * the mask's words are disallowed.
 */
export type TokenMask = Int32Array;

/** Sets every token the mask disallows to −∞. */
function applyTokenMask(logits: Float64Array, mask: TokenMask): void {
  for (let id = 0; id < logits.length; id++) {
    const w = id >> 5;
    if (w >= mask.length || ((mask[w] >>> (id & 31)) & 1) === 0) logits[id] = -Infinity;
  }
}

/**
 * Samples from a full logit row (any settings); `rng` is advanced only when a draw happens. A `mask` (grammar)
 * removes disallowed tokens after the logit bias, before the penalties (llama.cpp applies its grammar sampler first).
 */
export function sampleLogits(
  row: Float32Array,
  params: SamplingParams,
  history: readonly number[],
  rng: Rng,
  mask?: TokenMask,
): number {
  const logits = Float64Array.from(row);
  for (let i = 0; i < logits.length; i++) if (Number.isNaN(logits[i])) logits[i] = -Infinity;
  if (params.logitBias) {
    for (const [id, bias] of params.logitBias) if (id >= 0 && id < logits.length) logits[id] += bias;
  }
  if (mask) applyTokenMask(logits, mask);
  applyPenalties(logits, params, history);
  if (params.temperature <= 0 || params.topK === 1) return argmaxOf(logits);
  const k = params.topK > 0 ? Math.min(params.topK, logits.length) : logits.length;
  return sampleCandidates(selectTopK(logits, k), params, rng);
}

/**
 * llama.cpp `llama_sampler_penalties_apply`: for each token seen in the last N, a positive logit is divided by the
 * repetition penalty and a negative one multiplied; then count·frequency + presence is subtracted.
 */
export function applyPenalties(logits: Float64Array, params: SamplingParams, history: readonly number[]): void {
  if (!hasPenalties(params) || history.length === 0) return;
  const lastN = params.penaltyLastN < 0 ? history.length : Math.min(params.penaltyLastN, history.length);
  const counts = new Map<number, number>();
  for (let i = history.length - lastN; i < history.length; i++) {
    counts.set(history[i], (counts.get(history[i]) ?? 0) + 1);
  }
  for (const [id, count] of counts) {
    if (id < 0 || id >= logits.length) continue;
    let l = logits[id];
    l = l <= 0 ? l * params.repetitionPenalty : l / params.repetitionPenalty;
    logits[id] = l - count * params.frequencyPenalty - params.presencePenalty;
  }
}

/** The k best entries of `logits`, sorted descending, ties broken by lower id (a bounded min-heap, O(n log k)). */
export function selectTopK(logits: Float64Array, k: number): Candidates {
  const n = logits.length;
  k = Math.max(1, Math.min(k, n));
  // heap[0] is the worst kept entry; "worse" = lower logit, or equal logit and higher id.
  const heap = new Int32Array(k);
  let size = 0;
  const worse = (a: number, b: number): boolean => logits[a] < logits[b] || (logits[a] === logits[b] && a > b);
  for (let id = 0; id < n; id++) {
    if (size < k) {
      let i = size++;
      heap[i] = id;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!worse(heap[i], heap[p])) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    } else if (worse(heap[0], id)) {
      heap[0] = id;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < size && worse(heap[l], heap[m])) m = l;
        if (r < size && worse(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
  }
  const ids = Int32Array.from(heap.subarray(0, size)).sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0));
  const out = new Float64Array(size);
  for (let i = 0; i < size; i++) out[i] = logits[ids[i]];
  return { ids, logits: out, n: size };
}

/** Converts a backend top-k (already sorted, highest first) to a candidate list. */
function candidatesFromTopK(top: TopK): Candidates {
  const logits = Float64Array.from(top.logits);
  for (let i = 0; i < logits.length; i++) if (Number.isNaN(logits[i])) logits[i] = -Infinity;
  return { ids: Int32Array.from(top.ids), logits, n: top.ids.length };
}

/** top-p → min-p → temperature → seeded draw over sorted candidates (llama.cpp semantics, min_keep = 1). */
export function sampleCandidates(c: Candidates, params: SamplingParams, rng: Rng): number {
  if (c.n === 0) throw new RangeError('sampleCandidates: no candidates');
  // Masked (−∞) entries at the end can never be drawn; keep at least one candidate.
  while (c.n > 1 && c.logits[c.n - 1] === -Infinity) c.n--;
  if (params.temperature <= 0) return c.ids[0];
  // top-p: the smallest prefix whose probability mass reaches p.
  if (params.topP < 1) {
    const p = softmax(c);
    let cum = 0;
    for (let i = 0; i < c.n; i++) {
      cum += p[i];
      if (cum >= params.topP) {
        c.n = i + 1;
        break;
      }
    }
  }
  // min-p: keep tokens whose probability is at least minP × the top probability (compared as logits).
  if (params.minP > 0 && c.n > 1) {
    const minLogit = c.logits[0] + Math.log(params.minP);
    let keep = 1;
    while (keep < c.n && c.logits[keep] >= minLogit) keep++;
    c.n = keep;
  }
  for (let i = 0; i < c.n; i++) c.logits[i] /= params.temperature;
  const p = softmax(c);
  const u = rng.nextDouble();
  let cum = 0;
  for (let i = 0; i < c.n; i++) {
    cum += p[i];
    if (u < cum) return c.ids[i];
  }
  return c.ids[c.n - 1];
}

/** Probabilities of the first c.n candidates (f64, max-subtracted). */
function softmax(c: Candidates): Float64Array {
  const p = new Float64Array(c.n);
  const max = c.logits[0];
  if (max === -Infinity) {
    p.fill(1 / c.n);
    return p;
  }
  let sum = 0;
  for (let i = 0; i < c.n; i++) {
    p[i] = Math.exp(c.logits[i] - max);
    sum += p[i];
  }
  for (let i = 0; i < c.n; i++) p[i] /= sum;
  return p;
}

function argmaxOf(logits: Float64Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

function hasBias(p: SamplingParams): boolean {
  return p.logitBias !== null && p.logitBias.size > 0;
}

function hasPenalties(p: SamplingParams): boolean {
  return p.penaltyLastN !== 0 && (p.repetitionPenalty !== 1 || p.frequencyPenalty !== 0 || p.presencePenalty !== 0);
}
