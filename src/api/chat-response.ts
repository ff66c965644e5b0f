/**
 * Chat completion responses in OpenAI's shape, from a request's generation results: the whole `chat.completion`, or
 * the `chat.completion.chunk` stream (reasoning, content and tool-call fragments as the answer parser separates them,
 * log-probabilities riding on the chunk of their tokens, usage on the last chunk).
 */

import type { GenerationResult } from '../engine/generate.js';
import type { PositionLogprobs } from '../engine/generate-logprobs.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { ChatAnswer, type AnswerShape } from './chat-answer.js';
import { type ResponseMeta, type ChunkMakers, usageOf } from './completion-response.js';
import { chatLogprobs } from './logprobs-format.js';
import type { ChatCompletion, ChatCompletionChunk, ChatToolCallDelta, CompletionUsage } from './types.js';

/** The whole chat completion of `results` (one choice per result). */
export function chatCompletion(
  meta: ResponseMeta,
  shape: AnswerShape,
  results: readonly GenerationResult[],
  tk: Tokenizer,
): ChatCompletion {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: results.map((result, index) => {
      const a = ChatAnswer.whole(shape, result.text);
      const message = {
        role: 'assistant' as const,
        content: a.content,
        ...(a.reasoning ? { reasoning_content: a.reasoning } : {}),
        ...(a.calls.length > 0 ? { tool_calls: a.calls } : {}),
      };
      const finish = chatFinish(result.finishReason, a.calls.length);
      const logprobs = result.logprobs ? chatLogprobs(tk, result.logprobs) : null;
      return { index, message, finish_reason: finish, logprobs };
    }),
    usage: usageOf(results),
  };
}

/**
 * A chat choice's finish reason: 'tool_calls' when it stopped with calls; 'length' whenever `max_tokens` cut it,
 * calls or not (a call may be unfinished), as llama.cpp's server reports.
 */
function chatFinish(reason: 'stop' | 'length', calls: number): 'stop' | 'length' | 'tool_calls' {
  return reason === 'stop' && calls > 0 ? 'tool_calls' : reason;
}

/** The chunk makers of a streamed chat completion of `n` choices. */
export function chatChunks(
  meta: ResponseMeta,
  shape: AnswerShape,
  n: number,
  tk: Tokenizer,
): ChunkMakers<ChatCompletionChunk> {
  type Delta = ChatCompletionChunk['choices'][0]['delta'];
  const chunk = (
    index: number,
    delta: Delta,
    finish: ChatCompletionChunk['choices'][0]['finish_reason'],
    usage: CompletionUsage | null,
    lp: readonly PositionLogprobs[] | null = null,
  ): ChatCompletionChunk => ({
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index, delta, finish_reason: finish, logprobs: lp ? chatLogprobs(tk, lp) : null }],
    usage,
  });
  const answers = Array.from({ length: n }, () => new ChatAnswer(shape));
  // One delta may hold reasoning and answer text (a close tag inside it): reasoning goes first, in its own chunk.
  const deltas = (
    i: number,
    s: { reasoning: string; content: string; calls?: readonly ChatToolCallDelta[] },
    lp: readonly PositionLogprobs[] | null,
  ): ChatCompletionChunk[] => {
    const out: ChatCompletionChunk[] = [];
    const calls = s.calls ?? [];
    const textLp = calls.length > 0 ? null : lp; // with call fragments, the log-probabilities ride on those
    if (s.reasoning) out.push(chunk(i, { reasoning_content: s.reasoning }, null, null, s.content ? null : textLp));
    if (s.content || (!s.reasoning && textLp && textLp.length > 0))
      out.push(chunk(i, { content: s.content }, null, null, textLp));
    if (calls.length > 0) out.push(chunk(i, { tool_calls: [...calls] }, null, null, lp));
    return out;
  };
  return {
    first: Array.from({ length: n }, (_, i) => chunk(i, { role: 'assistant', content: '' }, null, null)),
    delta: (text, lp, i) => deltas(i, answers[i]!.push(text), lp),
    final: (r, lp, i, usage) => {
      const e = answers[i]!.end();
      return [
        ...deltas(i, { reasoning: e.reasoning, content: e.content, calls: e.callDeltas }, null),
        chunk(i, {}, chatFinish(r.finishReason, e.calls.length), usage, lp),
      ];
    },
  };
}
