/**
 * The generation loop: lease a slot from the prompt cache, prefill the prompt's uncached tail, then sample, stream
 * and evaluate one token at a time until an end-of-generation token, a stop string, `maxTokens` or the end of the
 * context. Text is streamed through the tokenizer's UTF-8-safe stream decoder and the stop matcher, so a partial
 * character or a stop string is never emitted.
 *
 * With n choices (`generateChoices`) the prompt is prefilled once, its KV copied into a slot per choice, and the live
 * choices decode together: one `evalRows` step per token for all of them (weights read once), each choice sampling
 * from its own row with its own seed (`seed + index`). More choices than the model has slots run in groups.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { SequenceToken, Transformer } from '../model/model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { ChoiceRun, choiceSeed, type FinishReason } from './choice-run.js';
import { nowMs, type Context } from './context.js';
import type { PositionLogprobs } from './generate-logprobs.js';
import { Sampler, type LogitSource, type ReadbackRoute, type SamplingParams, type TokenMask } from './sampler.js';
import type { SlotLease } from './prompt-cache.js';
import { type PromptImage, prefillWithImages, resumeAt } from './prompt-images.js';
import { canPipeline, type DecodeClock, pipelinedDecode } from './pipelined-decode.js';

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
  /** Called for each generated token (EOG excluded) with its log-probabilities when asked, and its choice's index. */
  readonly onToken?: (id: number, logprobs: PositionLogprobs | null, index: number) => void;
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
  /**
   * Context shift (llama.cpp `--context-shift`): when the context is full, keep the first `nKeep` positions, drop
   * half of the rest and go on (the transformer re-rotates the kept keys in place). Absent: stop with 'length'.
   */
  readonly contextShift?: { readonly nKeep: number };
  /** Image chunks of the prompt (`prompt` holds their placeholder ids), in order. */
  readonly images?: readonly PromptImage[];
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
  const { constraint, ...rest } = input;
  const gen = generateChoices(ctx, tokenizer, rest, 1, constraint ? [constraint] : undefined);
  try {
    for (;;) {
      const step = await gen.next();
      if (step.done) return step.value[0]!;
      yield step.value.text;
    }
  } finally {
    await gen.return([]);
  }
}

/** A text delta of one choice. */
export interface ChoiceDelta {
  readonly index: number;
  readonly text: string;
}

/**
 * Runs `n` choices of one generation (prompt prefilled once, choices decoded together); yields each choice's text
 * deltas and returns the results by choice index. `constraints`, when given, holds one grammar matcher per choice.
 * Throws `LlmError('aborted')` when `signal` fires.
 */
export async function* generateChoices(
  ctx: Context,
  tokenizer: Pick<Tokenizer, 'createStreamDecoder'>,
  input: Omit<GenerationInput, 'constraint'>,
  n: number,
  constraints?: readonly TokenConstraint[],
): AsyncGenerator<ChoiceDelta, GenerationResult[], void> {
  const t0 = nowMs();
  const { prompt, signal } = input;
  try {
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
    const group = Math.max(1, Math.min(n, ctx.transformer.maxSequenceRows, ctx.nSlots));
    const results: GenerationResult[] = [];
    for (let first = 0; first < n; first += group) {
      const indices = Array.from({ length: Math.min(group, n - first) }, (_, i) => first + i);
      const gen = runGroup(ctx, tokenizer, input, indices, constraints, t0);
      for (;;) {
        const step = await gen.next();
        if (step.done) {
          results.push(...step.value);
          break;
        }
        yield step.value;
      }
    }
    return results;
  } catch (e) {
    if (signal?.aborted && !(e instanceof LlmError && e.code === 'aborted')) {
      throw new LlmError('aborted', 'generation was aborted', { cause: signal.reason });
    }
    throw e;
  } finally {
    for (const c of constraints ?? []) c.dispose?.();
  }
}

/**
 * Makes room for `run`'s next token when the context is full, by llama.cpp's context shift: keep the first `nKeep`
 * positions, drop half of the rest (n_discard = n_left / 2), re-rotate the kept keys in place; the prompt cache keeps
 * only the cells before the dropped range. False when the request or the model cannot shift (recurrent state;
 * multi-stream rope, which llama.cpp does not shift either).
 */
async function shiftContext(ctx: Context, run: ChoiceRun, lease: SlotLease): Promise<boolean> {
  const shift = run.contextShift;
  const t = ctx.transformer;
  if (!shift || !t.shiftContext || t.hasRecurrentState || t.config.ropeMulti) return false;
  const nPast = run.lastPos; // positions 0 … lastPos−1 hold KV
  const nDiscard = Math.floor((nPast - shift.nKeep) / 2);
  if (nDiscard < 1) return false;
  await t.shiftContext(lease.slot, shift.nKeep, nDiscard, nPast);
  ctx.cache.shifted(lease, shift.nKeep);
  run.shifted(nDiscard);
  return true;
}

/** Row `row` of the transformer's last step as a `LogitSource` (undefined: the last evaluated token). */
function rowSource(t: Transformer, row: number | undefined): LogitSource {
  return { readLogits: () => t.readLogits(row), argmax: () => t.argmax(row), topK: (k) => t.topK(k, row) };
}

/** One group of choices sharing a prefill: the slots are leased, filled, decoded together and released. */
async function* runGroup(
  ctx: Context,
  tokenizer: Pick<Tokenizer, 'createStreamDecoder'>,
  input: Omit<GenerationInput, 'constraint'>,
  indices: readonly number[],
  constraints: readonly TokenConstraint[] | undefined,
  t0: number,
): AsyncGenerator<ChoiceDelta, GenerationResult[], void> {
  const { prompt, signal } = input;
  const fullRow = input.logprobs !== undefined || constraints !== undefined;
  const vocab = ctx.transformer.config.vocabSize;
  const runs = indices.map(
    (i) =>
      new ChoiceRun(
        i,
        input,
        new Sampler({ ...input.sampling, seed: choiceSeed(input.sampling.seed, i) }, vocab, { fullRow }),
        tokenizer.createStreamDecoder(),
        constraints?.[i],
      ),
  );
  const leases: SlotLease[] = [];
  let prefillMs = 0;
  const clock: DecodeClock = { t0, ttft: 0, decodeMs: 0 };
  try {
    // Prefill the uncached tail once; its KV is recorded only once completely written. Recurrent models stop their
    // prefill where the prompt leaves a cached prefix and snapshot their state there (and at the prompt's end), so
    // the next prompt sharing either resumes from it (measured before the lease cuts it).
    const split = ctx.cache.isRecurrent ? ctx.cache.sharedPrefix(input.cacheKey, prompt) : 0;
    leases.push(ctx.cache.acquire(input.cacheKey, prompt));
    const lead = leases[0]!;
    const tp = nowMs();
    const cuts = ctx.cache.isRecurrent ? [split, ...(input.stateBoundaries ?? [])] : [];
    const ends = [...new Set(cuts.filter((c) => c > lead.reused && c < prompt.length)), prompt.length].sort(
      (a, b) => a - b,
    );
    const images = input.images ?? [];
    for (let i = 0, from = resumeAt(lead.reused, images); i < ends.length; from = ends[i++]) {
      const to = ends[i]!;
      const piece = prompt.slice(Math.max(from, lead.reused), to); // a cut image chunk is evaluated again whole
      const logits = to === prompt.length ? 'last' : 'none';
      if (images.length > 0) await prefillWithImages(ctx, lead.slot, prompt, images, { from, to }, logits, signal);
      else await ctx.decode([{ slot: lead.slot, startPos: from!, tokens: piece, logits }], 'prefill', signal);
      ctx.cache.append(lead, piece);
      await ctx.cache.snapshot(lead);
    }
    // Every other choice starts from a copy of the prompt's KV.
    for (let i = 1; i < runs.length; i++) {
      const lease = ctx.cache.acquire(input.cacheKey, prompt);
      leases.push(lease);
      ctx.transformer.copySlot(lead.slot, lease.slot, prompt.length);
      ctx.cache.append(lease, prompt.slice(lease.reused));
    }
    prefillMs = nowMs() - tp;

    // The first token of every choice comes from the prompt's logits.
    let sources = runs.map(() => rowSource(ctx.transformer, undefined));
    let stepping = runs;
    if (canPipeline(ctx, runs, fullRow)) {
      // Greedy on a device that keeps the token: each step submitted before the previous token is read back.
      const gen = pipelinedDecode(ctx, runs[0]!, leases[0]!, clock, signal, sources[0]!);
      for (;;) {
        const step = await gen.next();
        if (step.done) {
          if (step.value) sources = [step.value];
          else stepping = [];
          break;
        }
        yield { index: runs[0]!.index, text: step.value };
      }
    }
    let lastYield = nowMs();
    for (;;) {
      // Backends whose steps settle as microtasks (WASM) would otherwise starve the task queue, so an abort message
      // from another thread could never be delivered; give it a turn every few milliseconds.
      if (signal && nowMs() - lastYield > YIELD_INTERVAL_MS) {
        await yieldToEventLoop();
        lastYield = nowMs();
      }
      throwIfAborted(signal, 'generation');
      const rows: SequenceToken[] = [];
      const next: ChoiceRun[] = [];
      for (let i = 0; i < stepping.length; i++) {
        const run = stepping[i]!;
        const token = await run.sample(sources[i]!);
        if (clock.ttft === 0) clock.ttft = nowMs() - t0;
        const text = run.take(token, ctx.contextLength);
        if (text) yield { index: run.index, text };
        if (!run.live) continue;
        const lease = leases[runs.indexOf(run)]!;
        if (run.lastPos + 1 >= ctx.contextLength && !(await shiftContext(ctx, run, lease))) {
          const tail = run.cutAtContext();
          if (tail) yield { index: run.index, text: tail };
          continue;
        }
        rows.push({ slot: lease.slot, pos: run.lastPos, token });
        next.push(run);
      }
      if (rows.length === 0) break;
      const td = nowMs();
      if (rows.length === 1) {
        const r = rows[0]!;
        await ctx.decode([{ slot: r.slot, startPos: r.pos, tokens: [r.token], logits: 'last' }], 'decode', signal);
        sources = [rowSource(ctx.transformer, undefined)];
      } else {
        await ctx.decodeRows(rows, signal);
        sources = rows.map((_, i) => rowSource(ctx.transformer, i));
      }
      for (const r of rows) {
        const lease = leases.find((l) => l.slot === r.slot)!;
        if (!runs[leases.indexOf(lease)]!.isShifted) ctx.cache.append(lease, [r.token]);
      }
      clock.decodeMs += nowMs() - td;
      stepping = next;
    }
  } finally {
    for (const lease of leases) ctx.cache.release(lease);
  }
  const timings = {
    prefillMs,
    timeToFirstTokenMs: clock.ttft,
    decodeMs: clock.decodeMs,
    totalMs: nowMs() - t0,
  };
  return runs.map((run, i) => ({
    text: run.text,
    tokens: run.generated,
    finishReason: run.finishReason,
    promptTokens: prompt.length,
    cachedTokens: leases[0]!.reused,
    slot: leases[i]!.slot,
    route: run.route,
    ...(input.logprobs !== undefined ? { logprobs: run.logprobs } : {}),
    timings,
  }));
}
