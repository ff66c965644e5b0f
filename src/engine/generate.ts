/**
 * The generation loop: lease a slot from the prompt cache, prefill the prompt's uncached tail, then sample, stream
 * and evaluate one token at a time until an end-of-generation token, a stop string, `maxTokens` or the end of the
 * context. Text is streamed through the tokenizer's UTF-8-safe stream decoder and the stop matcher, so a partial
 * character or a stop string is never emitted.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { nowMs, type Context } from './context.js';
import { positionLogprobs, type PositionLogprobs } from './generate-logprobs.js';
import { Sampler, type ReadbackRoute, type SamplingParams, type TokenMask } from './sampler.js';
import { StopMatcher } from './stop.js';

/** Longest stretch of decoding, ms, without letting queued tasks (an abort message) run. */
const YIELD_INTERVAL_MS = 8;

/** One macrotask turn (a MessageChannel round trip: not clamped like nested `setTimeout(0)`). */
function yieldToEventLoop(): Promise<void> {
  if (typeof MessageChannel === 'undefined') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/** What one generation needs. */
export interface GenerationInput {
  /** Prompt token ids (BOS included when the vocab wants it); at least one. */
  readonly prompt: readonly number[];
  /** Prompt-cache key string (`PromptCache.keyString`). */
  readonly cacheKey: string;
  readonly sampling: SamplingParams;
  /** Most tokens to generate; `Infinity` = until the context is full. */
  readonly maxTokens: number;
  /** Stop strings (never emitted). */
  readonly stop: readonly string[];
  /** Tokens that end generation (not emitted, not evaluated). */
  readonly eogIds: ReadonlySet<number>;
  readonly signal?: AbortSignal;
  /** Report log-probabilities with this many alternatives per position (0–20); absent = none. */
  readonly logprobs?: number;
  /** Called for each generated token (EOG excluded) with its log-probabilities when asked. */
  readonly onToken?: (id: number, logprobs: PositionLogprobs | null) => void;
  /**
   * Special tokens shown in the text as their marker (an output parser needs them: `<think>`, harmony channel
   * markers), although special tokens are otherwise not rendered.
   */
  readonly visibleTokens?: ReadonlyMap<number, string>;
  /** Restricts which tokens may be sampled (a grammar); generation stops when it is complete. */
  readonly constraint?: TokenConstraint;
  /**
   * Prompt positions the chat layer knows as turn boundaries (the end of the system prompt): a model with recurrent
   * layers snapshots its state there, so another conversation sharing that prefix resumes from it.
   */
  readonly stateBoundaries?: readonly number[];
}

/** A constraint on the sampled tokens (a compiled grammar's matcher). */
export interface TokenConstraint {
  /** The tokens allowed next, or null when any may come. */
  nextMask(): TokenMask | null | Promise<TokenMask | null>;
  /** Advances over a sampled token; false when the token is not allowed (generation then ends). */
  accept(id: number): boolean;
  /** True when the grammar is complete and nothing more may follow. */
  isTerminated(): boolean;
  /** Frees the constraint's state (called once generation ends). */
  dispose?(): void;
}

/** Why generation ended (OpenAI `finish_reason`). */
type FinishReason = 'stop' | 'length';

/** Timing of one generation, in milliseconds. */
interface GenerationTimings {
  /** Prompt evaluation (the uncached part). */
  readonly prefillMs: number;
  /** From the start of the request to the first sampled token. */
  readonly timeToFirstTokenMs: number;
  /** Evaluating generated tokens. */
  readonly decodeMs: number;
  readonly totalMs: number;
}

/** The outcome of one generation. */
export interface GenerationResult {
  readonly text: string;
  /** Generated token ids (the EOG token excluded). */
  readonly tokens: readonly number[];
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
  /** Prompt tokens whose KV came from the prompt cache. */
  readonly cachedTokens: number;
  readonly slot: number;
  readonly route: ReadbackRoute;
  /** Per generated token, when `logprobs` was asked. */
  readonly logprobs?: readonly PositionLogprobs[];
  readonly timings: GenerationTimings;
}

/**
 * Runs one generation on `ctx`; yields text deltas as they become safe to show and returns the result. Throws
 * `LlmError('aborted')` when `signal` fires (the slot keeps only KV that was completely written).
 */
export async function* generate(
  ctx: Context,
  tokenizer: Pick<Tokenizer, 'createStreamDecoder'>,
  input: GenerationInput,
): AsyncGenerator<string, GenerationResult, void> {
  const t0 = nowMs();
  const { prompt, signal } = input;
  if (prompt.length === 0)
    throw new LlmError('invalid-request', 'generate: the prompt is empty; give at least one token', {
      details: { field: 'prompt' },
    });
  if (prompt.length >= ctx.contextLength) {
    throw new LlmError(
      'context-overflow',
      `generate: the prompt has ${prompt.length} tokens but the context holds ${ctx.contextLength}; shorten it, use truncate: 'history', or load with a larger contextLength`,
      {
        details: { promptTokens: prompt.length, contextLength: ctx.contextLength },
      },
    );
  }
  // Let an abort already posted to this thread (a worker's abort-signal port) arrive before any work starts.
  if (signal) await yieldToEventLoop();
  throwIfAborted(signal, 'generation');
  const wantLogprobs = input.logprobs !== undefined;
  const constraint = input.constraint;
  const sampler = new Sampler(input.sampling, ctx.transformer.config.vocabSize, {
    fullRow: wantLogprobs || constraint !== undefined,
  });
  const logprobs: PositionLogprobs[] = [];
  // Recurrent models stop their prefill where the prompt leaves a cached prefix and snapshot their state there (and
  // at the prompt's end), so the next prompt sharing either resumes from it (measured before the lease cuts it).
  const split = ctx.cache.isRecurrent ? ctx.cache.sharedPrefix(input.cacheKey, prompt) : 0;
  const lease = ctx.cache.acquire(input.cacheKey, prompt);
  const decoder = tokenizer.createStreamDecoder();
  const stopper = new StopMatcher(input.stop);
  const history = prompt.slice();
  const generated: number[] = [];
  let text = '';
  let finishReason: FinishReason = 'length';
  let prefillMs = 0;
  let decodeMs = 0;
  let ttft = 0;
  try {
    // Prefill the uncached tail; its KV is recorded only once completely written.
    const tp = nowMs();
    const cuts = ctx.cache.isRecurrent ? [split, ...(input.stateBoundaries ?? [])] : [];
    const ends = [...new Set(cuts.filter((c) => c > lease.reused && c < prompt.length)), prompt.length].sort(
      (a, b) => a - b,
    );
    for (let i = 0, from = lease.reused; i < ends.length; from = ends[i++]) {
      const to = ends[i];
      const piece = prompt.slice(from, to);
      const logits = to === prompt.length ? 'last' : 'none';
      await ctx.decode([{ slot: lease.slot, startPos: from, tokens: piece, logits }], 'prefill', signal);
      ctx.cache.append(lease, piece);
      await ctx.cache.snapshot(lease);
    }
    prefillMs = nowMs() - tp;

    let lastYield = nowMs();
    for (;;) {
      // Backends whose steps settle as microtasks (WASM) would otherwise starve the task queue, so an abort message
      // from another thread could never be delivered; give it a turn every few milliseconds.
      if (signal && nowMs() - lastYield > YIELD_INTERVAL_MS) {
        await yieldToEventLoop();
        lastYield = nowMs();
      }
      throwIfAborted(signal, 'generation');
      const mask = constraint ? await constraint.nextMask() : null;
      const token = await sampler.sample(ctx.transformer, history, mask ?? undefined);
      if (generated.length === 0) ttft = nowMs() - t0;
      if (input.eogIds.has(token)) {
        finishReason = 'stop';
        break;
      }
      let lp: PositionLogprobs | null = null;
      if (wantLogprobs && sampler.lastRow) {
        lp = positionLogprobs(sampler.lastRow, token, input.logprobs ?? 0);
        logprobs.push(lp);
      }
      input.onToken?.(token, lp);
      const accepted = constraint ? constraint.accept(token) : true;
      generated.push(token);
      history.push(token);
      const marker = input.visibleTokens?.get(token);
      const r = stopper.push(marker !== undefined ? decoder.flush() + marker : decoder.push(token));
      if (r.text) {
        text += r.text;
        yield r.text;
      }
      if (r.stopped || !accepted || (constraint?.isTerminated() ?? false)) {
        finishReason = 'stop';
        break;
      }
      // The token would be evaluated at `pos`. Prompt + output never exceed the context: once they fill it, the
      // answer ends with 'length' (so usage.total_tokens ≤ contextLength, whatever max_tokens asked for).
      const pos = prompt.length + generated.length - 1;
      if (generated.length >= input.maxTokens || pos + 1 >= ctx.contextLength) {
        finishReason = 'length';
        break;
      }
      const td = nowMs();
      await ctx.decode([{ slot: lease.slot, startPos: pos, tokens: [token], logits: 'last' }], 'decode', signal);
      ctx.cache.append(lease, [token]);
      decodeMs += nowMs() - td;
    }
    const rest = stopper.push(decoder.flush());
    const tailText = rest.text + (rest.stopped ? '' : stopper.flush());
    if (tailText) {
      text += tailText;
      yield tailText;
    }
  } catch (e) {
    if (signal?.aborted && !(e instanceof LlmError && e.code === 'aborted')) {
      throw new LlmError('aborted', 'generation was aborted', { cause: signal.reason });
    }
    throw e;
  } finally {
    ctx.cache.release(lease);
    constraint?.dispose?.();
  }
  return {
    text,
    tokens: generated,
    finishReason,
    promptTokens: prompt.length,
    cachedTokens: lease.reused,
    slot: lease.slot,
    route: sampler.route,
    ...(wantLogprobs ? { logprobs } : {}),
    timings: { prefillMs, timeToFirstTokenMs: ttft, decodeMs, totalMs: nowMs() - t0 },
  };
}
