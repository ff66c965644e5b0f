/**
 * Conformance of a loaded model against llama.cpp's numbers (`*.reference.json`, format in shared/models/README.md):
 * feeds `eval_input`, compares every position's logits with the reference rows, checks argmax agreement where
 * llama.cpp's choice is decisive and the greedy continuation. Used by `webgguf conform` and the test suites.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { GgmlType, type GgufFile } from '../gguf/types.js';
import type { Transformer } from './model.js';

/** A llama.cpp reference file (the keys this module reads). */
export interface ReferenceJson {
  readonly model?: string;
  readonly prompt?: string;
  readonly eval_input: readonly number[];
  readonly n_vocab: number;
  /** F32-KV logits per position ([positions][n_vocab]). */
  readonly logits_per_position_kv_f32: readonly (readonly number[])[];
  /** Same, on a copy whose weights llama.cpp dequantized to F32 (absent for all-F32 models). */
  readonly logits_per_position_kv_f32_dequant_f32?: readonly (readonly number[])[];
  readonly greedy_kv_f32?: { readonly n: number; readonly tokens: readonly number[]; readonly text?: string };
}

/** Parses and validates a reference JSON text; `source` names it in errors. */
export function parseReferenceJson(text: string, source: string): ReferenceJson {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new LlmError('invalid-request', `reading reference ${source}: not valid JSON (${(e as Error).message})`, {
      cause: e,
    });
  }
  const r = raw as Partial<ReferenceJson>;
  const bad = (what: string): never => {
    throw new LlmError(
      'invalid-request',
      `reading reference ${source}: ${what}; expected a llama.cpp *.reference.json`,
      {
        details: { source },
      },
    );
  };
  if (typeof r !== 'object' || r === null) bad('the top level is not an object');
  if (!Array.isArray(r.eval_input) || r.eval_input.length === 0) bad("'eval_input' is missing or empty");
  if (typeof r.n_vocab !== 'number') bad("'n_vocab' is missing");
  const rows = r.logits_per_position_kv_f32;
  if (!Array.isArray(rows) || rows.length !== r.eval_input!.length)
    bad("'logits_per_position_kv_f32' must have one row per eval_input token");
  for (const key of ['logits_per_position_kv_f32', 'logits_per_position_kv_f32_dequant_f32'] as const) {
    const v = r[key];
    if (v !== undefined && (!Array.isArray(v) || v.some((row) => !Array.isArray(row) || row.length !== r.n_vocab))) {
      bad(`'${key}' rows must have n_vocab = ${r.n_vocab} entries`);
    }
  }
  return r as ReferenceJson;
}

/** How a model's matrices are stored, for choosing tolerances. */
export type WeightClass = 'f32' | 'f16' | 'bf16' | 'quantized';

/** The weight class of a file: the least precise type among its 2-D tensors. */
export function classifyWeights(gguf: GgufFile): WeightClass {
  let cls: WeightClass = 'f32';
  const rank: Record<WeightClass, number> = { f32: 0, f16: 1, bf16: 2, quantized: 3 };
  for (const t of gguf.tensors) {
    if (t.shape.length < 2) continue;
    const c: WeightClass =
      t.type === GgmlType.F32
        ? 'f32'
        : t.type === GgmlType.F16
          ? 'f16'
          : t.type === GgmlType.BF16
            ? 'bf16'
            : 'quantized';
    if (rank[c] > rank[cls]) cls = c;
  }
  return cls;
}

/** Limits of one conformance run (max |Δ| of any logit). */
export interface Tolerances {
  /** vs `logits_per_position_kv_f32_dequant_f32`. */
  readonly dequantF32: number;
  /** vs `logits_per_position_kv_f32`. */
  readonly kvF32: number;
  /** Argmax must agree where llama.cpp's top logit leads the second by more than this. */
  readonly argmaxMargin: number;
}

/**
 * The one tolerance table of the plain-TS reference backend (f32 weights after dequantization, f64 accumulation).
 * gemma is looser vs the dequantized rows because llama.cpp's CPU GELU goes through an F16 table.
 */
export function referenceTolerances(weights: WeightClass, arch: string): Tolerances {
  const isGemma = arch.startsWith('gemma');
  const kvF32: Record<WeightClass, number> = { f32: 1e-3, f16: 2e-2, bf16: 0.1, quantized: 0.5 };
  // lfm2's short-conv blocks multiply three projections (B · x · C) before out_proj, so llama.cpp's own Q8_K rounding
  // of activations on its normal path grows about half again (its dequantized-F32 logits still match to 1e-5).
  const gated = arch === 'lfm2' && weights === 'quantized' ? 1.5 : 1;
  return { dequantF32: isGemma ? 2e-2 : 1e-3, kvF32: kvF32[weights] * gated, argmaxMargin: 0.5 };
}

/** Largest |a[i] − b[i]|. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (Number.isNaN(d)) return Number.NaN; // a NaN anywhere fails every limit
    if (d > m) m = d;
  }
  return m;
}

/** Normalised mean squared error Σ(a−b)² / Σb² (ggml test-backend-ops' NMSE; b is the reference). */
export function nmse(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let ref = 0;
  for (let i = 0; i < a.length; i++) {
    err += (a[i] - b[i]) ** 2;
    ref += b[i] * b[i];
  }
  return ref === 0 ? err : err / ref;
}

/** Index of the largest value (first on ties). */
export function argmaxOf(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/** Top value minus second value. */
export function topMargin(row: ArrayLike<number>): number {
  let a = -Infinity;
  let b = -Infinity;
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (v > a) {
      b = a;
      a = v;
    } else if (v > b) b = v;
  }
  return a - b;
}

/** The best two candidates of a logit row, highest first. */
interface TopTwo {
  readonly ids: ArrayLike<number>;
  readonly logits: ArrayLike<number>;
}

/** The two largest logits of a row with their ids (first index on ties). */
function topTwo(row: ArrayLike<number>): TopTwo {
  let a = -1;
  let b = -1;
  for (let i = 0; i < row.length; i++) {
    if (a < 0 || row[i] > row[a]) {
      b = a;
      a = i;
    } else if (b < 0 || row[i] > row[b]) b = i;
  }
  return { ids: [a, b], logits: [row[a], row[b]] };
}

/** One pass/fail line of a report. */
interface ConformanceCheck {
  readonly name: string;
  readonly passed: boolean;
  /** Human-readable measurement, e.g. 'max |Δ| 3.1e-6 ≤ 1e-3'. */
  readonly detail: string;
}

/** Result of `checkConformance`. */
export interface ConformanceReport {
  readonly positions: number;
  /** Max |Δ| vs the dequantized-F32 rows, or null when the reference has none. */
  readonly maxAbsDequantF32: number | null;
  readonly maxAbsKvF32: number;
  readonly nmseKvF32: number;
  /** Positions where our argmax equals llama.cpp's F32-KV argmax / all positions. */
  readonly argmaxAgree: number;
  /** Decisive positions (margin > argmaxMargin) and how many of them agree. */
  readonly argmaxDecisive: number;
  readonly argmaxDecisiveAgree: number;
  /** Our greedy tokens, or null when not run. */
  readonly greedyTokens: readonly number[] | null;
  /** Leading greedy tokens equal to llama.cpp's. */
  readonly greedyPrefix: number;
  /** Our top-2 gap at the first divergence, when llama.cpp's token was our second choice; else null. */
  readonly greedyDivergenceMargin: number | null;
  readonly checks: readonly ConformanceCheck[];
  readonly passed: boolean;
}

/** How the greedy continuation is judged (see `ConformanceOptions.greedy`). */
export type GreedyMode = 'exact' | 'near-tie' | 'report' | 'off';

/** Options of `checkConformance`. */
export interface ConformanceOptions {
  readonly tolerances: Tolerances;
  /**
   * The greedy continuation vs `greedy_kv_f32.tokens`. 'exact': all tokens must match. 'near-tie' (default): they must
   * match up to the first divergence, and that one must be a near-tie — llama.cpp's token is our second choice and
   * our top-2 gap is below `argmaxMargin` (where llama.cpp's own activation rounding can flip the choice).
   * 'report' only measures the matching prefix; 'off' skips the run.
   */
  readonly greedy?: GreedyMode;
  /** Slot to use (its KV is overwritten from position 0). Default 0. */
  readonly slot?: number;
  readonly signal?: AbortSignal;
}

const fmt = (x: number): string => (x === 0 ? '0' : x.toExponential(2));

/** Runs `ref.eval_input` through `model` and compares with the reference (see the file header). */
export async function checkConformance(
  model: Transformer,
  ref: ReferenceJson,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const { tolerances: tol, slot = 0 } = options;
  const vocab = model.config.vocabSize;
  if (vocab !== ref.n_vocab) {
    throw new LlmError(
      'invalid-request',
      `conformance: the model has ${vocab} tokens but the reference was made with ${ref.n_vocab}; is it the reference of another model?`,
      {
        details: { vocab, refVocab: ref.n_vocab },
      },
    );
  }
  const input = Int32Array.from(ref.eval_input);
  const logits = (await model.eval(input, 0, slot, { logits: 'all', signal: options.signal }))!; // [positions, vocab]
  let maxDeq: number | null = ref.logits_per_position_kv_f32_dequant_f32 ? 0 : null;
  let maxKv = 0;
  let nmseSum = 0;
  let agree = 0;
  let decisive = 0;
  let decisiveAgree = 0;
  const toF32 = (row: readonly number[]): Float32Array => Float32Array.from(row); // exact float32 of the written value
  for (let p = 0; p < input.length; p++) {
    const ours = logits.subarray(p * vocab, (p + 1) * vocab);
    const kv = toF32(ref.logits_per_position_kv_f32[p]);
    maxKv = Math.max(maxKv, maxAbsDiff(ours, kv));
    nmseSum += nmse(ours, kv);
    if (maxDeq !== null)
      maxDeq = Math.max(maxDeq, maxAbsDiff(ours, toF32(ref.logits_per_position_kv_f32_dequant_f32![p])));
    const same = argmaxOf(ours) === argmaxOf(kv);
    if (same) agree++;
    if (topMargin(kv) > tol.argmaxMargin) {
      decisive++;
      if (same) decisiveAgree++;
    }
  }
  const checks: ConformanceCheck[] = [];
  if (maxDeq !== null) {
    checks.push({
      name: 'logits vs llama.cpp dequantized-F32',
      passed: maxDeq <= tol.dequantF32,
      detail: `max |Δ| ${fmt(maxDeq)} (limit ${tol.dequantF32})`,
    });
  }
  checks.push({
    name: 'logits vs llama.cpp F32-KV',
    passed: maxKv <= tol.kvF32,
    detail: `max |Δ| ${fmt(maxKv)} (limit ${tol.kvF32}), NMSE ${fmt(nmseSum / input.length)}`,
  });
  checks.push({
    name: 'argmax where decisive',
    passed: decisiveAgree === decisive,
    detail: `${decisiveAgree}/${decisive} positions with margin > ${tol.argmaxMargin} agree (all positions: ${agree}/${input.length})`,
  });

  let greedyTokens: number[] | null = null;
  let greedyPrefix = 0;
  let divergenceMargin: number | null = null;
  const expected = ref.greedy_kv_f32?.tokens;
  const greedyMode = options.greedy ?? 'near-tie';
  if (expected && expected.length > 0 && greedyMode !== 'off') {
    greedyTokens = [];
    const lastRow = logits.subarray((input.length - 1) * vocab);
    let top: TopTwo = topTwo(lastRow);
    let matching = true;
    for (let i = 0; i < expected.length; i++) {
      throwIfAborted(options.signal, 'conformance greedy run');
      const next = top.ids[0];
      greedyTokens.push(next);
      if (matching && next !== expected[i]) {
        matching = false;
        if (top.ids[1] === expected[i]) divergenceMargin = top.logits[0] - top.logits[1];
      }
      if (matching) greedyPrefix++;
      if (i === expected.length - 1) break;
      await model.eval(Int32Array.of(next), input.length + i, slot, { logits: 'last', signal: options.signal });
      top = await model.topK(2);
    }
    const n = expected.length;
    if (greedyMode === 'exact') {
      checks.push({
        name: `greedy ${n} tokens`,
        passed: greedyPrefix === n,
        detail: `${greedyPrefix}/${n} tokens equal llama.cpp's`,
      });
    } else if (greedyMode === 'near-tie') {
      const nearTie = divergenceMargin !== null && divergenceMargin < tol.argmaxMargin;
      const detail =
        greedyPrefix === n
          ? `${n}/${n} tokens equal llama.cpp's`
          : `${greedyPrefix}/${n} tokens equal llama.cpp's, then ` +
            (divergenceMargin === null
              ? "llama.cpp's token is not our second choice"
              : `a ${nearTie ? 'near-tie' : 'decisive'} divergence (our top-2 gap ${divergenceMargin.toFixed(3)}, limit ${tol.argmaxMargin})`);
      checks.push({ name: `greedy ${n} tokens (up to a near-tie)`, passed: greedyPrefix === n || nearTie, detail });
    }
  }
  return {
    positions: input.length,
    maxAbsDequantF32: maxDeq,
    maxAbsKvF32: maxKv,
    nmseKvF32: nmseSum / input.length,
    argmaxAgree: agree,
    argmaxDecisive: decisive,
    argmaxDecisiveAgree: decisiveAgree,
    greedyTokens,
    greedyPrefix,
    greedyDivergenceMargin: divergenceMargin,
    checks,
    passed: checks.every((c) => c.passed),
  };
}
