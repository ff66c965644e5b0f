/**
 * OpenAI-shaped request and response types of the public API (chat completions, text completions, usage), plus
 * the llama.cpp sampling fields OpenAI lacks (`top_k`, `min_p`, `repetition_penalty`, `repeat_last_n`). Everything
 * here is plain, structured-cloneable data except `signal`, so it crosses the worker boundary unchanged.
 */

/** Who wrote a message. */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** One message of a conversation. */
export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  /** Optional author name (passed to templates that use it). */
  readonly name?: string;
  /** For `tool` messages: the call this answers. */
  readonly tool_call_id?: string;
}

/** Sampling and stopping fields shared by chat and text completions. */
export interface SamplingRequest {
  /** 0 … 100; 0 = greedy. Default 0.8. */
  readonly temperature?: number;
  /** (0, 1]; 1 disables. Default 0.95. */
  readonly top_p?: number;
  /** Integer ≥ 0; 0 disables. Default 40. */
  readonly top_k?: number;
  /** [0, 1]; 0 disables. Default 0.05. */
  readonly min_p?: number;
  /** Integer ≥ 1. Default: until an end token, a stop string or the end of the context. */
  readonly max_tokens?: number;
  /** Up to 16 non-empty strings that end generation; they are never part of the output. */
  readonly stop?: string | readonly string[];
  /** Safe integer; the same seed, model and request give the same tokens. Default: random. */
  readonly seed?: number;
  /** Token id (as a decimal string or number key) → bias in [−100, 100], added to the logit. */
  readonly logit_bias?: Readonly<Record<string, number>>;
  /** [−2, 2]: subtracted once per earlier occurrence of a token. Default 0. */
  readonly frequency_penalty?: number;
  /** [−2, 2]: subtracted once from every token that occurred. Default 0. */
  readonly presence_penalty?: number;
  /** > 0 (llama.cpp `repeat_penalty`); 1 disables. Default 1. */
  readonly repetition_penalty?: number;
  /** Tokens the penalties look back over; −1 = the whole sequence, 0 disables. Default 64. */
  readonly repeat_last_n?: number;
  /** Only 1 is supported. */
  readonly n?: number;
  /** Aborts the request: the promise rejects (or the stream ends) with `LlmError('aborted')`. */
  readonly signal?: AbortSignal;
}

/** `engine.chat.completions.create` input. */
export interface ChatCompletionRequest extends SamplingRequest {
  readonly messages: readonly ChatMessage[];
  /** Return an async iterable of chunks instead of one completion. */
  readonly stream?: boolean;
  /** Ignored (one engine serves one model); accepted for OpenAI compatibility. */
  readonly model?: string;
  /**
   * What to do when the prompt does not fit the context: 'none' (default) fails with `context-overflow`;
   * 'history' drops the oldest whole turns (never the system message or the last message).
   */
  readonly truncate?: 'none' | 'history';
}

/** `engine.completions.create` input: a raw prompt, no chat template. */
export interface CompletionRequest extends SamplingRequest {
  /** Text (tokenized with BOS as the vocab says and special tokens parsed) or token ids. */
  readonly prompt: string | readonly number[];
  readonly stream?: boolean;
  /** Prefix the output with the prompt text. */
  readonly echo?: boolean;
  readonly model?: string;
}

/** Why a choice ended. */
export type FinishReason = 'stop' | 'length';

/** Token counts of a request. */
export interface CompletionUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: {
    /** Prompt tokens whose KV came from the prompt cache. */
    readonly cached_tokens: number;
  };
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
    readonly message: { readonly role: 'assistant'; readonly content: string };
    readonly finish_reason: FinishReason;
    readonly logprobs: null;
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
    readonly delta: { readonly role?: 'assistant'; readonly content?: string };
    readonly finish_reason: FinishReason | null;
    readonly logprobs: null;
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
    readonly logprobs: null;
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
    readonly logprobs: null;
  }[];
  readonly usage: CompletionUsage | null;
}
