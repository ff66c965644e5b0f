/**
 * `generateText`: one-shot generation on an already-loaded `Transformer`, for tools and the `webgguf generate`
 * command — tokenizes a raw prompt, runs the same sampling and stopping as the engine (every llama.cpp sampling
 * option, validated), streams text to a callback and reports speeds. No queue, no chat template, no warmup.
 */

import { throwIfAborted } from '../errors.js';
import type { Transformer } from '../model/model.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { Context } from './context.js';
import { generate, type GenerationResult } from './generate.js';
import { PromptCache } from './prompt-cache.js';
import type { PromptImage } from './prompt-images.js';
import { normalizeSamplingOptions, type SamplingOptions } from './sampling-options.js';

/** Options of `generateText`. */
export interface GenerateTextOptions extends SamplingOptions {
  readonly transformer: Transformer;
  readonly tokenizer: Tokenizer;
  /** Text (tokenized with `addSpecial` / `parseSpecial`) or token ids. */
  readonly prompt: string | readonly number[];
  /** KV cells per slot the transformer was loaded with (`LoadTransformerOptions.contextLength`). */
  readonly contextLength: number;
  /** KV slots the transformer was loaded with (default 1; slot 0 is used). */
  readonly nSlots?: number;
  /** Add BOS/EOS as the vocab says (default true). */
  readonly addSpecial?: boolean;
  /** Parse special-token text in the prompt (default true, as llama.cpp's completion endpoint). */
  readonly parseSpecial?: boolean;
  /** Receives each piece of text as soon as it is safe to show. */
  readonly onText?: (text: string) => void;
  readonly signal?: AbortSignal;
  /** Image chunks of a prompt given as ids (placeholders at their positions; see `engine/prompt-images.ts`). */
  readonly images?: readonly PromptImage[];
}

/** The result with speeds. */
export interface GenerateTextResult extends GenerationResult {
  /** The prompt tokens that were evaluated. */
  readonly promptIds: readonly number[];
  readonly prefillTokensPerSecond: number;
  readonly decodeTokensPerSecond: number;
  /** The seed used (given, or the random one drawn). */
  readonly seed: number;
}

/**
 * Generates from `prompt` with full sampling control.
 * @example
 * const r = await generateText({ transformer, tokenizer, prompt: 'Once upon a time', contextLength: 256,
 *   temperature: 0.7, top_k: 40, seed: 1, max_tokens: 64, onText: (t) => process.stdout.write(t) });
 * console.error(`${r.decodeTokensPerSecond.toFixed(1)} tok/s`);
 */
export async function generateText(o: GenerateTextOptions): Promise<GenerateTextResult> {
  const norm = normalizeSamplingOptions(o, o.tokenizer.vocabSize);
  const ids =
    typeof o.prompt === 'string'
      ? o.tokenizer.encode(o.prompt, { addSpecial: o.addSpecial ?? true, parseSpecial: o.parseSpecial ?? true })
      : [...o.prompt];
  throwIfAborted(o.signal, 'generateText');
  const ctx = new Context(o.transformer, { contextLength: o.contextLength, nSlots: o.nSlots ?? 1 });
  const key = PromptCache.keyString({ model: 'generateText', template: '', tokenizer: '' });
  const gen = generate(ctx, o.tokenizer, {
    prompt: ids,
    cacheKey: key,
    sampling: norm.sampling,
    maxTokens: norm.maxTokens,
    stop: norm.stop,
    eogIds: o.tokenizer.eogIds,
    signal: o.signal,
    ...(o.images ? { images: o.images } : {}),
  });
  for (;;) {
    const step = await gen.next();
    if (step.done) {
      const r = step.value;
      const t = ctx.timers;
      return {
        ...r,
        promptIds: ids,
        seed: norm.sampling.seed,
        prefillTokensPerSecond: t.prefillMs > 0 ? (t.prefillTokens * 1000) / t.prefillMs : 0,
        decodeTokensPerSecond: t.decodeMs > 0 ? (t.decodeTokens * 1000) / t.decodeMs : 0,
      };
    }
    o.onText?.(step.value);
  }
}
