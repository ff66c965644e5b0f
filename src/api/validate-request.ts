/**
 * Checks a request's fields and turns them into engine settings. Every problem is an `LlmError('invalid-request')`
 * whose message and `details.field` name the field, the value given and what is allowed.
 */

import { LlmError } from '../errors.js';
import { DEFAULT_SAMPLING, type SamplingParams } from '../engine/sampler.js';
import { randomSeed } from '../engine/rng.js';
import type { ChatCompletionRequest, ChatMessage, CompletionRequest, SamplingRequest } from './types.js';

/** Most stop strings a request may give. */
export const MAX_STOP_STRINGS = 16;
const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Settings of a request after validation. */
export interface NormalizedRequest {
  readonly sampling: SamplingParams;
  /** Infinity when not limited. */
  readonly maxTokens: number;
  readonly stop: readonly string[];
  readonly stream: boolean;
}

function fail(field: string, value: unknown, allowed: string): never {
  let shown: string;
  try {
    shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' && value !== null ? JSON.stringify(value)?.slice(0, 80) ?? String(value) : String(value);
  } catch {
    shown = Object.prototype.toString.call(value);
  }
  throw new LlmError('invalid-request', `request field '${field}' is ${shown}; it must be ${allowed}`, { details: { field, allowed } });
}

function num(req: SamplingRequest, field: keyof SamplingRequest, def: number, min: number, max: number, opts: { integer?: boolean; minExclusive?: boolean } = {}): number {
  const v = (req as Record<string, unknown>)[field];
  if (v === undefined || v === null) return def;
  const kind = opts.integer ? 'an integer' : 'a number';
  const range = `${opts.minExclusive ? '>' : '≥'} ${min}${max === Infinity ? '' : ` and ≤ ${max}`}`;
  if (typeof v !== 'number' || !Number.isFinite(v) || (opts.integer && !Number.isInteger(v))) fail(field, v, `${kind} ${range}`);
  if (v < min || (opts.minExclusive && v === min) || v > max) fail(field, v, `${kind} ${range}`);
  return v;
}

/** Validates the sampling and stopping fields shared by both endpoints. */
export function normalizeSampling(req: SamplingRequest & { stream?: unknown }, vocabSize: number): NormalizedRequest {
  if (req === null || typeof req !== 'object') fail('request', req, 'an object');
  if (req.n !== undefined && req.n !== 1) fail('n', req.n, '1 (one choice per request)');
  if (req.stream !== undefined && typeof req.stream !== 'boolean') fail('stream', req.stream, 'a boolean');
  if (req.signal !== undefined && !(typeof req.signal === 'object' && req.signal !== null && 'aborted' in req.signal)) fail('signal', req.signal, 'an AbortSignal');
  const temperature = num(req, 'temperature', DEFAULT_SAMPLING.temperature, 0, 100);
  const topP = num(req, 'top_p', DEFAULT_SAMPLING.topP, 0, 1, { minExclusive: true });
  const topK = num(req, 'top_k', DEFAULT_SAMPLING.topK, 0, Infinity, { integer: true });
  const minP = num(req, 'min_p', DEFAULT_SAMPLING.minP, 0, 1);
  const maxTokens = num(req, 'max_tokens', Infinity, 1, Infinity, { integer: true });
  const frequencyPenalty = num(req, 'frequency_penalty', 0, -2, 2);
  const presencePenalty = num(req, 'presence_penalty', 0, -2, 2);
  const repetitionPenalty = num(req, 'repetition_penalty', 1, 0, 100, { minExclusive: true });
  const penaltyLastN = num(req, 'repeat_last_n', DEFAULT_SAMPLING.penaltyLastN, -1, Infinity, { integer: true });
  const seed = req.seed === undefined || req.seed === null ? randomSeed() : num(req, 'seed', 0, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, { integer: true });

  let stop: string[] = [];
  if (req.stop !== undefined && req.stop !== null) {
    const list = typeof req.stop === 'string' ? [req.stop] : req.stop;
    if (!Array.isArray(list) || list.length > MAX_STOP_STRINGS || list.some((s) => typeof s !== 'string' || s.length === 0)) {
      fail('stop', req.stop, `a non-empty string or an array of at most ${MAX_STOP_STRINGS} non-empty strings`);
    }
    stop = [...list];
  }

  let logitBias: Map<number, number> | null = null;
  if (req.logit_bias !== undefined && req.logit_bias !== null) {
    if (typeof req.logit_bias !== 'object' || Array.isArray(req.logit_bias)) fail('logit_bias', req.logit_bias, 'an object mapping token ids to biases');
    logitBias = new Map();
    for (const [k, v] of Object.entries(req.logit_bias)) {
      const id = Number(k);
      if (!/^\d+$/.test(k) || !Number.isSafeInteger(id) || id >= vocabSize) fail(`logit_bias.${k}`, k, `a token id in 0…${vocabSize - 1}`);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < -100 || v > 100) fail(`logit_bias.${k}`, v, 'a number in [-100, 100]');
      if (v !== 0) logitBias.set(id, v);
    }
  }
  return {
    sampling: { temperature, topK, topP, minP, repetitionPenalty, frequencyPenalty, presencePenalty, penaltyLastN, logitBias, seed },
    maxTokens,
    stop,
    stream: req.stream === true,
  };
}

/** Validates a chat request's messages and options. */
export function normalizeChatRequest(req: ChatCompletionRequest, vocabSize: number): NormalizedRequest & { truncate: 'none' | 'history'; messages: ChatMessage[] } {
  const base = normalizeSampling(req, vocabSize);
  if (!Array.isArray(req.messages) || req.messages.length === 0) fail('messages', req.messages, 'a non-empty array of { role, content }');
  const messages: ChatMessage[] = req.messages.map((m, i) => {
    if (m === null || typeof m !== 'object') fail(`messages[${i}]`, m, 'an object { role, content }');
    if (!ROLES.has(m.role)) fail(`messages[${i}].role`, m.role, "one of 'system', 'user', 'assistant', 'tool'");
    if (typeof m.content !== 'string') fail(`messages[${i}].content`, m.content, 'a string');
    return { ...m };
  });
  const truncate = req.truncate ?? 'none';
  if (truncate !== 'none' && truncate !== 'history') fail('truncate', truncate, "'none' or 'history'");
  return { ...base, truncate, messages };
}

/** Validates a text completion request. */
export function normalizeCompletionRequest(req: CompletionRequest, vocabSize: number): NormalizedRequest & { echo: boolean } {
  const base = normalizeSampling(req, vocabSize);
  const p = req.prompt;
  if (typeof p === 'string') {
    if (p.length === 0) fail('prompt', p, 'a non-empty string or array of token ids');
  } else if (!Array.isArray(p) || p.length === 0 || p.some((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize)) {
    fail('prompt', p, `a non-empty string or array of token ids in 0…${vocabSize - 1}`);
  }
  if (req.echo !== undefined && typeof req.echo !== 'boolean') fail('echo', req.echo, 'a boolean');
  return { ...base, echo: req.echo === true };
}
