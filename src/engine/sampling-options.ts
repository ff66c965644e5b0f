/**
 * Sampling and stopping options as users write them (OpenAI field names plus llama.cpp's extras), their
 * validation into engine settings. Every problem is an `LlmError('invalid-request')` whose message and `details.field`
 * name the field, the value given and what is allowed. Shared by the API (`api/validate-request.ts`), `generateText`
 * and the CLI (whose flags for these options are in `cli/sampling-flags.ts`).
 */

import { LlmError } from '../errors.js';
import { randomSeed } from './rng.js';
import { DEFAULT_SAMPLING, type SamplingParams } from './sampler.js';
import { MAX_STOP_LENGTH } from './stop.js';

/** Most stop strings a request may give. */
const MAX_STOP_STRINGS = 16;

/** User-facing sampling and stopping options. */
export interface SamplingOptions {
  /** 0 … 100; 0 = greedy. Default 0.8. */
  readonly temperature?: number;
  /** (0, 1]; 1 disables. Default 0.95. */
  readonly top_p?: number;
  /** Integer ≥ 0; 0 disables. Default 40. */
  readonly top_k?: number;
  /** [0, 1]; 0 disables. Default 0.05. */
  readonly min_p?: number;
  /** Integer ≥ 1. Default: until an end token, a stop string or the end of the context. */
  readonly max_tokens?: number;
  /** Up to 16 non-empty strings of at most 256 characters that end generation; they are never part of the output. */
  readonly stop?: string | readonly string[];
  /** Safe integer; the same seed, model and request give the same tokens. Default: random. */
  readonly seed?: number;
  /** Token id (decimal string key) → bias in [−100, 100], added to the logit. */
  readonly logit_bias?: Readonly<Record<string, number>>;
  /** [−2, 2]: subtracted once per earlier occurrence of a token. Default 0. */
  readonly frequency_penalty?: number;
  /** [−2, 2]: subtracted once from every token that occurred. Default 0. */
  readonly presence_penalty?: number;
  /** > 0 (llama.cpp `repeat_penalty`); 1 disables. Default 1. */
  readonly repetition_penalty?: number;
  /** Tokens the penalties look back over; −1 = the whole sequence, 0 disables. Default 64. */
  readonly repeat_last_n?: number;
}

/** Validated settings. */
export interface NormalizedSampling {
  readonly sampling: SamplingParams;
  /** Infinity when not limited. */
  readonly maxTokens: number;
  readonly stop: readonly string[];
}

/** Throws the `invalid-request` error for `field`. */
export function invalidField(field: string, value: unknown, allowed: string): never {
  let shown: string;
  try {
    shown =
      typeof value === 'object' && value !== null
        ? (JSON.stringify(value)?.slice(0, 80) ?? String(value))
        : typeof value === 'string'
          ? JSON.stringify(value)
          : String(value);
  } catch {
    shown = Object.prototype.toString.call(value);
  }
  throw new LlmError('invalid-request', `request field '${field}' is ${shown}; it must be ${allowed}`, {
    details: { field, allowed },
  });
}

function num(
  o: object,
  field: string,
  def: number,
  min: number,
  max: number,
  opts: { integer?: boolean; minExclusive?: boolean } = {},
): number {
  const v = (o as Record<string, unknown>)[field];
  if (v === undefined || v === null) return def;
  const kind = opts.integer ? 'an integer' : 'a number';
  const range = `${opts.minExclusive ? '>' : '≥'} ${min}${max === Infinity ? '' : ` and ≤ ${max}`}`;
  if (typeof v !== 'number' || !Number.isFinite(v) || (opts.integer && !Number.isInteger(v)))
    invalidField(field, v, `${kind} ${range}`);
  if (v < min || (opts.minExclusive && v === min) || v > max) invalidField(field, v, `${kind} ${range}`);
  return v;
}

/** Validates `o` against a vocabulary of `vocabSize` tokens, filling llama.cpp's defaults. */
export function normalizeSamplingOptions(o: SamplingOptions, vocabSize: number): NormalizedSampling {
  if (o === null || typeof o !== 'object') invalidField('request', o, 'an object');
  const temperature = num(o, 'temperature', DEFAULT_SAMPLING.temperature, 0, 100);
  const topP = num(o, 'top_p', DEFAULT_SAMPLING.topP, 0, 1, { minExclusive: true });
  const topK = num(o, 'top_k', DEFAULT_SAMPLING.topK, 0, Infinity, { integer: true });
  const minP = num(o, 'min_p', DEFAULT_SAMPLING.minP, 0, 1);
  const maxTokens = num(o, 'max_tokens', Infinity, 1, Infinity, { integer: true });
  const frequencyPenalty = num(o, 'frequency_penalty', 0, -2, 2);
  const presencePenalty = num(o, 'presence_penalty', 0, -2, 2);
  const repetitionPenalty = num(o, 'repetition_penalty', 1, 0, 100, { minExclusive: true });
  const penaltyLastN = num(o, 'repeat_last_n', DEFAULT_SAMPLING.penaltyLastN, -1, Infinity, { integer: true });
  const seed =
    o.seed === undefined || o.seed === null
      ? randomSeed()
      : num(o, 'seed', 0, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, { integer: true });

  let stop: string[] = [];
  if (o.stop !== undefined && o.stop !== null) {
    const list = typeof o.stop === 'string' ? [o.stop] : o.stop;
    if (
      !Array.isArray(list) ||
      list.length > MAX_STOP_STRINGS ||
      list.some((s) => typeof s !== 'string' || s.length === 0)
    ) {
      invalidField('stop', o.stop, `a non-empty string or an array of at most ${MAX_STOP_STRINGS} non-empty strings`);
    }
    const tooLong = list.findIndex((s) => s.length > MAX_STOP_LENGTH);
    if (tooLong >= 0) {
      invalidField(
        typeof o.stop === 'string' ? 'stop' : `stop[${tooLong}]`,
        `${list[tooLong].slice(0, 40)}… (${list[tooLong].length} characters)`,
        `at most ${MAX_STOP_LENGTH} characters long`,
      );
    }
    stop = [...list];
  }

  let logitBias: Map<number, number> | null = null;
  if (o.logit_bias !== undefined && o.logit_bias !== null) {
    if (typeof o.logit_bias !== 'object' || Array.isArray(o.logit_bias))
      invalidField('logit_bias', o.logit_bias, 'an object mapping token ids to biases');
    logitBias = new Map();
    for (const [k, v] of Object.entries(o.logit_bias)) {
      const id = Number(k);
      if (!/^\d+$/.test(k) || !Number.isSafeInteger(id) || id >= vocabSize)
        invalidField(`logit_bias.${k}`, k, `a token id in 0…${vocabSize - 1}`);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < -100 || v > 100)
        invalidField(`logit_bias.${k}`, v, 'a number in [-100, 100]');
      if (v !== 0) logitBias.set(id, v);
    }
  }
  return {
    sampling: {
      temperature,
      topK,
      topP,
      minP,
      repetitionPenalty,
      frequencyPenalty,
      presencePenalty,
      penaltyLastN,
      logitBias,
      seed,
    },
    maxTokens,
    stop,
  };
}
