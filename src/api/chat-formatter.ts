/**
 * How the engine turns a conversation into prompt tokens: the `ChatFormatter` seam over the chat module
 * (`chat/prompt.ts` `buildPrompt`: the model's Jinja template, special markers parsed, BOS as the vocab wants,
 * history trimmed by whole turns). The engine needs the tokens, the template's identity (for the prompt-cache key)
 * and the stop strings / end tokens the template implies.
 */

import { buildPrompt, CHATML_TEMPLATE, selectTemplate, sha256Hex } from '../chat/index.js';
import type { GgufValue } from '../gguf/types.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ChatMessage } from './types.js';

/** A conversation ready to evaluate. */
export interface ChatPrompt {
  /** Prompt token ids, ending with the assistant's generation prompt. */
  readonly tokens: readonly number[];
  /** Stop strings the template implies (turn markers that may appear as text). */
  readonly stop: readonly string[];
  /** End-of-generation token ids the template and vocab imply. */
  readonly eogIds: readonly number[];
  /** Messages dropped to fit `maxPromptTokens`. */
  readonly droppedMessages: number;
}

/** Renders and tokenizes conversations with one chat template. */
export interface ChatFormatter {
  /** SHA-256 of the template text (part of the prompt-cache key). */
  readonly templateHash: string;
  /**
   * Builds the prompt; with `maxPromptTokens`, the oldest whole turns are dropped to fit (the system message and
   * the last turn are kept; when even they do not fit: `LlmError('context-overflow')`).
   */
  build(messages: readonly ChatMessage[], maxPromptTokens?: number): ChatPrompt;
}

/** Where the template comes from: an explicit text, else the model's `tokenizer.chat_template`, else ChatML. */
export interface ChatFormatterOptions {
  readonly template?: string;
  readonly metadata?: Readonly<Record<string, GgufValue>>;
}

/** The formatter for a model's template (or `options.template`). */
export function createChatFormatter(tokenizer: Tokenizer, options: ChatFormatterOptions = {}): ChatFormatter {
  const { text } = selectTemplate({ template: options.template, metadata: options.metadata });
  return {
    templateHash: sha256Hex(text),
    build(messages, maxPromptTokens) {
      const p = buildPrompt(messages, { tokenizer, template: text, metadata: options.metadata, maxPromptTokens });
      return { tokens: p.tokens, stop: p.stopStrings, eogIds: p.eogTokenIds ?? [], droppedMessages: p.droppedMessages };
    },
  };
}

/** ChatML (`<|im_start|>role\ncontent<|im_end|>\n`), the fallback of models without a template. */
export function createChatMlFormatter(tokenizer: Tokenizer): ChatFormatter {
  return createChatFormatter(tokenizer, { template: CHATML_TEMPLATE });
}
