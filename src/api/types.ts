/**
 * OpenAI-shaped request and response types of the public API (chat completions, text completions, usage), plus
 * the llama.cpp sampling fields OpenAI lacks (`top_k`, `min_p`, `repetition_penalty`, `repeat_last_n`). Everything
 * here is plain, structured-cloneable data except `signal`, so it crosses the worker boundary unchanged.
 */

import type { SamplingOptions } from '../engine/sampling-options.js';
import type { ResponseFormat } from '../structured/grammar-spec.js';
import type { ChatTool, ChatToolChoice } from '../tools/tool-spec.js';

export type { SamplingOptions };
export type { ResponseFormat, ChatTool, ChatToolChoice };

/** Who wrote a message. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/** A typed content part; only text parts are supported. */
export interface ChatTextPart {
  readonly type: 'text';
  readonly text: string;
}

/**
 * An image content part (OpenAI shape): `url` is a `data:` URL or an http(s) URL (fetched), or — an extension — a
 * `Blob` holding the encoded image. Needs an engine created with `mmproj`.
 */
export interface ChatImagePart {
  readonly type: 'image_url';
  readonly image_url: { readonly url: string | Blob };
}

/** A message of a request: as `ChatMessage`, and its content parts may also be images. */
export type ChatRequestMessage = Omit<ChatMessage, 'content'> & {
  readonly content: ChatMessage['content'] | readonly (ChatTextPart | ChatImagePart)[];
};

/** A tool call the assistant made (OpenAI shape); `arguments` is JSON text. */
export interface ChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/**
 * One fragment of a streamed call. The first fragment of an `index` carries `id`, `type` and the function's `name`;
 * the `arguments` of all fragments of an index, in order, concatenate to the call's arguments.
 */
export interface ChatToolCallDelta {
  readonly index: number;
  readonly id?: string;
  readonly type?: 'function';
  readonly function: { readonly name?: string; readonly arguments: string };
}

/** One message of a conversation. */
export interface ChatMessage {
  readonly role: ChatRole;
  /** Text or text parts; null (or absent) only on an assistant message with `tool_calls`. */
  readonly content: string | null | readonly ChatTextPart[];
  /** Optional author name (passed to templates that use it). */
  readonly name?: string;
  /** For `tool` messages: the call this answers. */
  readonly tool_call_id?: string;
  /** Assistant messages: the calls made (rendered through the model's template). */
  readonly tool_calls?: readonly ChatToolCall[];
  /** Assistant messages: earlier reasoning (templates that keep past reasoning render it). */
  readonly reasoning_content?: string;
}

/** Sampling and stopping fields shared by chat and text completions (see `SamplingOptions` for each field). */
export interface SamplingRequest extends SamplingOptions {
  /** OpenAI's newer name for `max_tokens` (same meaning; when both are given they must be equal). */
  readonly max_completion_tokens?: number;
  /**
   * Choices to generate, 1…8 (default 1). The prompt is prefilled once and the choices decode together; choice i
   * samples with `seed + i`, so a seeded request is reproducible and its choices differ.
   */
  readonly n?: number;
  /** Accepted for OpenAI compatibility; no effect locally. */
  readonly user?: string;
  /** Accepted for OpenAI compatibility: the last streamed chunk always carries `usage`. */
  readonly stream_options?: { readonly include_usage?: boolean } | null;
  /**
   * Constrain the output to JSON (`{ type: 'json_object' }`) or to a JSON schema
   * (`{ type: 'json_schema', json_schema: { name, schema, strict } }`); `{ type: 'text' }` is the default.
   */
  readonly response_format?: ResponseFormat | null;
  /** Constrain the output to a GBNF / XGrammar EBNF grammar (with a `root` rule). */
  readonly grammar?: string | null;
  /** Aborts the request: the promise rejects (or the stream ends) with `LlmError('aborted')`. */
  readonly signal?: AbortSignal;
}

/** `engine.chat.completions.create` input. */
export interface ChatCompletionRequest extends SamplingRequest {
  /** Return the log-probability of each generated token (log-softmax of the raw logits, before sampling settings). */
  readonly logprobs?: boolean | null;
  /** With `logprobs: true`: also the 0–20 most likely tokens at each position. */
  readonly top_logprobs?: number | null;
  readonly messages: readonly ChatRequestMessage[];
  /** Return an async iterable of chunks instead of one completion. */
  readonly stream?: boolean;
  /** Ignored (one engine serves one model); accepted for OpenAI compatibility. */
  readonly model?: string;
  /**
   * What to do when the prompt does not fit the context: 'none' (default) fails with `context-overflow`;
   * 'history' drops the oldest whole turns (never the system message or the last message).
   */
  readonly truncate?: 'none' | 'history';
  /**
   * Template variables over llama.cpp's defaults, as its server takes them: e.g. `{ enable_thinking: false }`
   * (default: true when the template supports reasoning) or `{ reasoning_effort: 'high' }`. JSON data only.
   */
  readonly chat_template_kwargs?: Readonly<Record<string, unknown>>;
  /** Functions the model may call (rendered through the model's template; see README "Tool calling"). */
  readonly tools?: readonly ChatTool[] | null;
  /** 'auto' (default with tools), 'none', 'required', or `{ type: 'function', function: { name } }` to force one. */
  readonly tool_choice?: ChatToolChoice | null;
  /** Allow several calls in one answer (default true). */
  readonly parallel_tool_calls?: boolean | null;
  /** gpt-oss style reasoning effort, passed to the template as `reasoning_effort` (unless the kwargs set it). */
  readonly reasoning_effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | null;
}

/** `engine.completions.create` input: a raw prompt, no chat template. */
export interface CompletionRequest extends SamplingRequest {
  /** Text (tokenized with BOS as the vocab says and special tokens parsed) or token ids. */
  readonly prompt: string | readonly number[];
  readonly stream?: boolean;
  /** Prefix the output with the prompt text. */
  readonly echo?: boolean;
  /** Return log-probabilities of the generated tokens with this many (0–20) alternatives per position. */
  readonly logprobs?: number | null;
  readonly model?: string;
}

/** Why a choice ended: 'stop' (an end-of-generation token or a stop string), 'length' (`max_tokens` or the context is full). */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

/**
 * Token counts of a request. `completion_tokens` counts every token generated (a stop string's tokens included, the
 * end-of-generation token excluded); `total_tokens` = prompt + completion never exceeds the context length: when
 * the context fills before `max_tokens`, generation ends there with `finish_reason: 'length'`.
 */
export interface CompletionUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: {
    /** Prompt tokens whose KV came from the prompt cache. */
    readonly cached_tokens: number;
  };
}

/** One alternative token at a position (chat `logprobs`). */
export interface ChatTopLogprob {
  /** The token's text (invalid UTF-8 pieces as U+FFFD; `bytes` has the exact bytes). */
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[] | null;
}

/** One generated token's log-probability and its most likely alternatives (chat `logprobs.content[i]`). */
export interface ChatTokenLogprob extends ChatTopLogprob {
  readonly top_logprobs: ChatTopLogprob[];
}

/** Chat choice `logprobs` (null when not asked for). */
export interface ChatLogprobs {
  readonly content: ChatTokenLogprob[] | null;
}

/** Text-completion choice `logprobs` (null when not asked for), in OpenAI's legacy shape. */
export interface CompletionLogprobs {
  readonly tokens: string[];
  readonly token_logprobs: number[];
  readonly top_logprobs: Record<string, number>[];
  /** Character offset of each token in the choice's text (echoed prompt included). */
  readonly text_offset: number[];
}

/** A whole chat answer (`stream` false). */
export interface ChatCompletion {
  readonly id: string;
  readonly object: 'chat.completion';
  /** Unix seconds. */
  readonly created: number;
  readonly model: string;
  readonly choices: readonly {
    readonly index: number;
    readonly message: {
      readonly role: 'assistant';
      /** The answer (reasoning excluded); '' when the answer is only tool calls. */
      readonly content: string;
      /** The calls the model made (then `finish_reason` is 'tool_calls'). */
      readonly tool_calls?: ChatToolCall[];
      /** The model's reasoning (thinking models), when it wrote any. */
      readonly reasoning_content?: string;
    };
    readonly finish_reason: FinishReason;
    readonly logprobs: ChatLogprobs | null;
  }[];
  readonly usage: CompletionUsage;
}

/** One piece of a streamed chat answer; the last chunk carries `finish_reason` and `usage`. */
export interface ChatCompletionChunk {
  readonly id: string;
  readonly object: 'chat.completion.chunk';
  readonly created: number;
  readonly model: string;
  readonly choices: readonly {
    readonly index: number;
    readonly delta: {
      readonly role?: 'assistant';
      readonly content?: string;
      readonly reasoning_content?: string;
      /** Call fragments, by `index`, sent as the model writes the call (see `ChatToolCallDelta`). */
      readonly tool_calls?: ChatToolCallDelta[];
    };
    readonly finish_reason: FinishReason | null;
    readonly logprobs: ChatLogprobs | null;
  }[];
  /** null except on the last chunk. */
  readonly usage: CompletionUsage | null;
}

/** A whole text completion (`stream` false). */
export interface Completion {
  readonly id: string;
  readonly object: 'text_completion';
  readonly created: number;
  readonly model: string;
  readonly choices: readonly {
    readonly index: number;
    readonly text: string;
    readonly finish_reason: FinishReason;
    readonly logprobs: CompletionLogprobs | null;
  }[];
  readonly usage: CompletionUsage;
}

/** One piece of a streamed text completion; the last chunk carries `finish_reason` and `usage`. */
export interface CompletionChunk {
  readonly id: string;
  readonly object: 'text_completion';
  readonly created: number;
  readonly model: string;
  readonly choices: readonly {
    readonly index: number;
    readonly text: string;
    readonly finish_reason: FinishReason | null;
    readonly logprobs: CompletionLogprobs | null;
  }[];
  readonly usage: CompletionUsage | null;
}
