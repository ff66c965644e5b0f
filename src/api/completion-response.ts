/**
 * Text completion responses in OpenAI's shape (`text_completion`, whole or streamed, the echoed prompt first), and
 * what every response shares: its id, creation time and model name, and the usage of a request's choices.
 */

import type { GenerationResult } from '../engine/generate.js';
import type { PositionLogprobs } from '../engine/generate-logprobs.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { EngineInfo } from './engine.js';
import { completionLogprobs } from './logprobs-format.js';
import type { Completion, CompletionChunk, CompletionUsage } from './types.js';

/** The id, creation time (seconds) and model name of one response. */
export interface ResponseMeta {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** How a streamed response is made: the opening chunks, each choice's text deltas, each choice's final chunks. */
export interface ChunkMakers<T> {
  readonly first: readonly T[];
  delta(text: string, logprobs: readonly PositionLogprobs[] | null, index: number): T[];
  final(
    r: GenerationResult,
    logprobs: readonly PositionLogprobs[] | null,
    index: number,
    usage: CompletionUsage | null,
  ): T[];
}

let idCounter = 0;

/** A fresh response id (`chatcmpl-…`, `cmpl-…`), the time and the model's name. */
export function responseMeta(prefix: string, info: EngineInfo): ResponseMeta {
  idCounter = (idCounter + 1) % 1e9;
  const id = `${prefix}-${Date.now().toString(36)}${idCounter.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
  return { id, created: Math.floor(Date.now() / 1000), model: info.model.name || info.model.identity };
}

/** Usage of a request's choices: the prompt once (it is prefilled once), the completion tokens of every choice. */
export function usageOf(results: readonly GenerationResult[]): CompletionUsage {
  const first = results[0]!;
  const completion = results.reduce((sum, r) => sum + r.tokens.length, 0);
  return {
    prompt_tokens: first.promptTokens,
    completion_tokens: completion,
    total_tokens: first.promptTokens + completion,
    prompt_tokens_details: { cached_tokens: first.cachedTokens },
  };
}

/** The whole text completion of `results`, each choice's text after the `echo`ed prompt. */
export function textCompletion(
  meta: ResponseMeta,
  echo: string,
  results: readonly GenerationResult[],
  tk: Tokenizer,
): Completion {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: results.map((result, index) => ({
      index,
      text: echo + result.text,
      finish_reason: result.finishReason,
      logprobs: result.logprobs ? completionLogprobs(tk, result.logprobs, echo.length) : null,
    })),
    usage: usageOf(results),
  };
}

/** The chunk makers of a streamed text completion of `n` choices (the echoed prompt as each choice's first chunk). */
export function completionChunks(
  meta: ResponseMeta,
  echo: string,
  n: number,
  tk: Tokenizer,
): ChunkMakers<CompletionChunk> {
  const offsets = new Array<number>(n).fill(echo.length); // per choice: characters streamed so far
  const chunk = (
    index: number,
    text: string,
    finish: GenerationResult['finishReason'] | null,
    usage: CompletionUsage | null,
    lp: readonly PositionLogprobs[] | null = null,
  ): CompletionChunk => {
    const logprobs = lp ? completionLogprobs(tk, lp, offsets[index]!) : null;
    if (logprobs) offsets[index]! += logprobs.tokens.reduce((k, t) => k + t.length, 0);
    return {
      id: meta.id,
      object: 'text_completion',
      created: meta.created,
      model: meta.model,
      choices: [{ index, text, finish_reason: finish, logprobs }],
      usage,
    };
  };
  return {
    first: echo ? Array.from({ length: n }, (_, i) => chunk(i, echo, null, null)) : [],
    delta: (t, lp, i) => [chunk(i, t, null, null, lp)],
    final: (r, lp, i, usage) => [chunk(i, '', r.finishReason, usage, lp)],
  };
}
