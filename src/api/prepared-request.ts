/**
 * A request ready to run (its prompt tokens, cache key, stop strings, end-of-generation ids, reasoning and tool
 * parsing, constraint), and how a chat request becomes one: the template renders the conversation (trimming whole
 * turns when asked), reasoning and tool markers that are single special tokens are made visible to the parsers.
 */

import { LlmError } from '../errors.js';
import { parserVisibleMarkers, startsInsideReasoning, type ReasoningFormat } from '../output/reasoning-format.js';
import type { GrammarEngine } from '../structured/grammar-engine.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { TOOL_MARKERS } from '../tools/tool-markers.js';
import type { ChatFormatter } from './chat-formatter.js';
import type { PromptImage } from '../engine/prompt-images.js';
import type { RequestImages } from './image-parts.js';
import type { ChatMessage } from './types.js';
import type { NormalizedRequest } from './validate-request.js';

/** A request ready to run: its prompt tokens, cache key and settings. */
export interface PreparedRequest {
  readonly prompt: number[];
  readonly key: string;
  readonly norm: NormalizedRequest;
  readonly stop: readonly string[];
  readonly eogIds: ReadonlySet<number>;
  readonly signal: AbortSignal | undefined;
  /** Chat: how the output carries reasoning, and whether it starts inside the reasoning. */
  readonly reasoning?: { readonly format: ReasoningFormat; readonly startInside: boolean };
  readonly visibleTokens?: ReadonlyMap<number, string>;
  /** The compiled output constraint, if any (a matcher is made from it when the request runs). */
  readonly compiled?: CompiledGrammar;
  /** Tokens of the prompt's system-prompt prefix to persist after the request (0: none). */
  readonly persistPrefix?: number;
  /** A chat request (context shift is on by default for them). */
  readonly isChat?: boolean;
  /** Image chunks of the prompt (`prompt` holds their placeholder ids). */
  readonly images?: readonly PromptImage[];
}

/** A compiled output constraint. */
type CompiledGrammar = Awaited<ReturnType<GrammarEngine['compile']>>;

/** Throws `context-overflow` when a prompt of `nTokens` leaves no room in a context of `contextLength` cells. */
export function checkPromptFits(nTokens: number, contextLength: number): void {
  if (nTokens >= contextLength) {
    throw new LlmError(
      'context-overflow',
      `preparing the prompt: ${nTokens} tokens do not fit the context of ${contextLength}; pass truncate: 'history' (chat), shorten the input, or load with a larger contextLength`,
      { details: { promptTokens: nTokens, contextLength } },
    );
  }
}

/** What preparing a chat request needs of its engine. */
export interface ChatPrepareEnv {
  readonly tokenizer: Tokenizer;
  readonly chat: ChatFormatter;
  /** KV cells per slot. */
  readonly contextLength: number;
  /** The engine's prompt-cache key for chat prompts. */
  readonly key: string;
  /** Throws `context-overflow` when `nTokens` do not fit. */
  checkFits(nTokens: number): void;
  /** Tokens of `prompt` that are its system prompt's own rendering (0: none to remember). */
  systemPrefix(prompt: readonly number[]): number;
}

/** Renders and tokenizes a conversation, trimming whole turns when asked and needed. */
export function prepareChatRequest(
  env: ChatPrepareEnv,
  req: {
    readonly messages: readonly ChatMessage[];
    readonly norm: NormalizedRequest & { truncate: 'none' | 'history' };
    readonly signal: AbortSignal | undefined;
    readonly chatTemplateKwargs?: unknown;
    readonly tools?: readonly unknown[] | undefined;
    readonly parseTools: boolean;
    /** The request's encoded images, in order, how the projector frames them and how to place them. */
    readonly images?: RequestImages | undefined;
  },
): PreparedRequest {
  const { messages, norm, signal, chatTemplateKwargs, tools, parseTools } = req;
  const tk = env.tokenizer;
  const n = env.contextLength;
  // With truncate: 'history', keep room for the answer: max_tokens, or a quarter of the context (at most half).
  const reserve = Math.min(Number.isFinite(norm.maxTokens) ? norm.maxTokens : Math.floor(n / 4), Math.floor(n / 2));
  const built = env.chat.build(messages, norm.truncate === 'history' ? Math.max(1, n - reserve) : undefined, {
    chatTemplateKwargs,
    signal,
    ...(tools ? { tools } : {}),
  });
  const im = req.images;
  const withImages = im?.place(tk, built.prompt, built.tokens, im.encoded, im.framing, built.droppedMessages > 0);
  const tokens = withImages ? withImages.tokens : built.tokens;
  const images = withImages ? { images: withImages.images } : {};
  env.checkFits(tokens.length);
  const key = env.key;
  const eogIds = new Set([...tk.eogIds, ...built.eogIds]);
  const persistPrefix = persistable(env.systemPrefix(built.tokens), built.tokens, withImages);
  const format = env.chat.reasoningFormat ?? { kind: 'none' as const };
  if (format.kind === 'none' && !parseTools)
    return {
      prompt: [...tokens],
      key,
      norm,
      stop: [...built.stop, ...norm.stop],
      eogIds,
      signal,
      persistPrefix,
      isChat: true,
      ...images,
    };
  // Harmony ends a channel with `<|end|>` and opens the next with `<|start|>`: they are not the end of the answer.
  if (format.kind === 'harmony')
    for (const id of eogIds) if (['<|end|>', '<|start|>'].includes(tk.tokenText(id))) eogIds.delete(id);
  // The parsers read their markers as text: those that are single special tokens are rendered into the stream.
  const visibleTokens = new Map<number, string>();
  for (const m of [...parserVisibleMarkers(format), ...(parseTools ? TOOL_MARKERS : [])]) {
    const ids = tk.encode(m, { addSpecial: false, parseSpecial: true });
    if (ids.length === 1 && tk.isControl(ids[0]) && !eogIds.has(ids[0])) visibleTokens.set(ids[0], m);
  }
  const stop = [...built.stop, ...norm.stop].filter(
    (s) => format.kind !== 'harmony' || (s !== '<|end|>' && s !== '<|start|>'),
  );
  const reasoning =
    format.kind === 'none' ? {} : { reasoning: { format, startInside: startsInsideReasoning(format, built.prompt) } };
  return {
    prompt: [...tokens],
    key,
    norm,
    stop,
    eogIds,
    signal,
    ...reasoning,
    visibleTokens,
    persistPrefix,
    isChat: true,
    ...images,
  };
}

/**
 * The system prefix to persist automatically: with images, only when it ends before the first one and placing them
 * kept its tokens (placeholders and image positions are never persisted automatically; `saveCache()` stores those).
 */
function persistable(
  prefix: number,
  text: readonly number[],
  placed: { readonly tokens: readonly number[]; readonly images: readonly { readonly start: number }[] } | undefined,
): number {
  if (!placed || prefix === 0) return prefix;
  if (placed.images.some((im) => im.start < prefix)) return 0;
  for (let i = 0; i < prefix; i++) if (placed.tokens[i] !== text[i]) return 0;
  return prefix;
}
