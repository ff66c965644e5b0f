/**
 * How the engine turns a conversation into prompt tokens: the `ChatFormatter` seam over the chat module
 * (`chat/prompt.ts` `buildPrompt`: the model's Jinja template rendered as llama.cpp renders it, special markers
 * parsed, BOS as the vocab wants, history trimmed by whole turns). The engine needs the tokens, the template's
 * identity (for the prompt-cache key) and the stop strings / end tokens the template implies.
 *
 * The template is compiled and probed when the formatter is created, i.e. at model load: a template that does not
 * parse is `LlmError('template')` there, not on the first message — unless the caller opted into
 * `fallback: 'chatml'`, which then renders ChatML and says so in `fallbackReason`.
 */

import {
  buildPrompt,
  CHATML_TEMPLATE,
  compileTemplate,
  selectTemplate,
  sha256Hex,
  templateCaps,
  templateSupportsThinking,
} from '../chat/index.js';
import type { TemplateBudget } from '../chat/template-budget.js';
import { validateChatTemplateKwargs } from '../chat/template-kwargs.js';
import { isLlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { detectReasoningFormat, type ReasoningFormat } from '../output/reasoning-format.js';
import type { ChatMessage } from './types.js';

/** A conversation ready to evaluate. */
interface ChatPrompt {
  /** Prompt token ids, ending with the assistant's generation prompt. */
  readonly tokens: readonly number[];
  /** Stop strings the template implies (turn markers that may appear as text). */
  readonly stop: readonly string[];
  /** End-of-generation token ids the template and vocab imply. */
  readonly eogIds: readonly number[];
  /** Messages dropped to fit `maxPromptTokens`. */
  readonly droppedMessages: number;
  /** The rendered text that was tokenised (no leading BOS text when the vocabulary adds BOS). */
  readonly prompt: string;
}

/** Per-request inputs of the template besides the messages. */
interface ChatBuildExtras {
  /** Template variables over llama.cpp's defaults (validated: `LlmError('invalid-request')`). */
  readonly chatTemplateKwargs?: unknown;
  /** OpenAI tool definitions rendered by templates that support tools. */
  readonly tools?: readonly unknown[];
  /** Stops a long render (`LlmError('aborted')`). */
  readonly signal?: AbortSignal;
}

/** Renders and tokenizes conversations with one chat template. */
export interface ChatFormatter {
  /** SHA-256 of the template text (part of the prompt-cache key). */
  readonly templateHash: string;
  /** Why ChatML is used instead of the model's template (only with `fallback: 'chatml'`). */
  readonly fallbackReason?: string;
  /** How the template's model writes reasoning (default: none). */
  readonly reasoningFormat?: ReasoningFormat;
  /** The template's Jinja text (tool-call syntax detection). */
  readonly templateText?: string;
  /** The template renders its `tools` variable (else the engine uses a generic tool prompt). */
  readonly supportsTools?: boolean;
  /**
   * The template renders a second call of an assistant message: `parallel_tool_calls` defaults to this, as in
   * llama.cpp's server (false with the generic tool prompt).
   */
  readonly supportsParallelToolCalls?: boolean;
  /**
   * Builds the prompt; with `maxPromptTokens`, the oldest whole turns are dropped to fit (the system message and
   * the last turn are kept; when even they do not fit: `LlmError('context-overflow')`).
   */
  build(messages: readonly ChatMessage[], maxPromptTokens?: number, extras?: ChatBuildExtras): ChatPrompt;
}

/** Where the template comes from: an explicit text, else the model's `tokenizer.chat_template`, else ChatML. */
export interface ChatFormatterOptions {
  readonly template?: string;
  readonly metadata?: Readonly<Record<string, GgufValue>>;
  /** 'chatml': use ChatML when the template does not compile (default: `LlmError('template')` at creation). */
  readonly fallback?: 'chatml' | 'error';
  /** Limits of each render (see `TemplateBudget`). */
  readonly budget?: TemplateBudget;
}

/** The formatter for a model's template (or `options.template`); compiles and probes it now. */
export function createChatFormatter(tokenizer: Tokenizer, options: ChatFormatterOptions = {}): ChatFormatter {
  let { text } = selectTemplate({ template: options.template, metadata: options.metadata });
  let fallbackReason: string | undefined;
  let thinking = false;
  let supportsTools = false;
  let supportsParallel = false;
  try {
    const compiled = compileTemplate(text);
    const caps = templateCaps(compiled);
    supportsTools = caps.supportsTools;
    supportsParallel = caps.supportsTools && caps.supportsParallelToolCalls;
    thinking = templateSupportsThinking(compiled);
  } catch (e) {
    if (options.fallback !== 'chatml' || !isLlmError(e, 'template')) throw e;
    fallbackReason = `the model's chat template does not compile (${e.message}); using ChatML`;
    text = CHATML_TEMPLATE;
  }
  return {
    templateHash: sha256Hex(text),
    ...(fallbackReason !== undefined ? { fallbackReason } : {}),
    reasoningFormat: detectReasoningFormat(text, thinking),
    templateText: text,
    supportsTools: fallbackReason === undefined && supportsTools,
    supportsParallelToolCalls: fallbackReason === undefined && supportsParallel,
    build(messages, maxPromptTokens, extras = {}) {
      const kwargs = validateChatTemplateKwargs(extras.chatTemplateKwargs);
      const p = buildPrompt(messages, {
        tokenizer,
        template: text,
        metadata: options.metadata,
        maxPromptTokens,
        chatTemplateKwargs: kwargs,
        ...(extras.tools !== undefined ? { tools: extras.tools } : {}),
        ...(extras.signal !== undefined ? { signal: extras.signal } : {}),
        ...(options.budget !== undefined ? { budget: options.budget } : {}),
      });
      return {
        tokens: p.tokens,
        stop: p.stopStrings,
        eogIds: p.eogTokenIds ?? [],
        droppedMessages: p.droppedMessages,
        prompt: p.prompt,
      };
    },
  };
}

/** ChatML (`<|im_start|>role\ncontent<|im_end|>\n`), the fallback of models without a template. */
export function createChatMlFormatter(tokenizer: Tokenizer): ChatFormatter {
  return createChatFormatter(tokenizer, { template: CHATML_TEMPLATE });
}
