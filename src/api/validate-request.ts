/**
 * Checks a request's fields and turns them into engine settings: the sampling fields through
 * `engine/sampling-options.ts`, plus messages, prompt, stream, n and truncate here. Every problem is an
 * `LlmError('invalid-request')` whose message and `details.field` name the field, the value and what is allowed.
 */

import { invalidField, normalizeSamplingOptions, type NormalizedSampling } from '../engine/sampling-options.js';
import type { ChatCompletionRequest, ChatMessage, CompletionRequest, SamplingRequest } from './types.js';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** Settings of a request after validation. */
export interface NormalizedRequest extends NormalizedSampling {
  readonly stream: boolean;
}

/** Validates the sampling and stopping fields shared by both endpoints. */
export function normalizeSampling(req: SamplingRequest & { stream?: unknown }, vocabSize: number): NormalizedRequest {
  if (req === null || typeof req !== 'object') invalidField('request', req, 'an object');
  if (req.n !== undefined && req.n !== 1) invalidField('n', req.n, '1 (one choice per request)');
  if (req.stream !== undefined && typeof req.stream !== 'boolean') invalidField('stream', req.stream, 'a boolean');
  if (req.signal !== undefined && !(typeof req.signal === 'object' && req.signal !== null && 'aborted' in req.signal)) invalidField('signal', req.signal, 'an AbortSignal');
  return { ...normalizeSamplingOptions(req, vocabSize), stream: req.stream === true };
}

/** Validates a chat request's messages and options. */
export function normalizeChatRequest(req: ChatCompletionRequest, vocabSize: number): NormalizedRequest & { truncate: 'none' | 'history'; messages: ChatMessage[] } {
  const base = normalizeSampling(req, vocabSize);
  if (!Array.isArray(req.messages) || req.messages.length === 0) invalidField('messages', req.messages, 'a non-empty array of { role, content }');
  const messages: ChatMessage[] = req.messages.map((m, i) => {
    if (m === null || typeof m !== 'object') invalidField(`messages[${i}]`, m, 'an object { role, content }');
    if (!ROLES.has(m.role)) invalidField(`messages[${i}].role`, m.role, "one of 'system', 'user', 'assistant', 'tool'");
    if (typeof m.content !== 'string') invalidField(`messages[${i}].content`, m.content, 'a string');
    return { ...m };
  });
  const truncate = req.truncate ?? 'none';
  if (truncate !== 'none' && truncate !== 'history') invalidField('truncate', truncate, "'none' or 'history'");
  return { ...base, truncate, messages };
}

/** Validates a text completion request. */
export function normalizeCompletionRequest(req: CompletionRequest, vocabSize: number): NormalizedRequest & { echo: boolean } {
  const base = normalizeSampling(req, vocabSize);
  const p = req.prompt;
  if (typeof p === 'string') {
    if (p.length === 0) invalidField('prompt', p, 'a non-empty string or array of token ids');
  } else if (!Array.isArray(p) || p.length === 0 || p.some((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize)) {
    invalidField('prompt', p, `a non-empty string or array of token ids in 0…${vocabSize - 1}`);
  }
  if (req.echo !== undefined && typeof req.echo !== 'boolean') invalidField('echo', req.echo, 'a boolean');
  return { ...base, echo: req.echo === true };
}
