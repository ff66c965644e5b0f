/**
 * The one error type of webgguf. Every failure the library reports is an `LlmError` whose `code` says which layer
 * failed and what a caller can do about it; `details` is plain, structured-cloneable data (it crosses the worker
 * boundary intact through the transfer handler in `worker/errors.ts`).
 */

/** Closed set of error codes, grouped by the layer that raises them. */
export type ErrorCode =
  // GPU and device
  | 'webgpu-unavailable'
  | 'feature-missing'
  | 'device-lost'
  | 'out-of-memory'
  // bytes: network and storage
  | 'network'
  | 'range-unsupported'
  | 'storage-quota'
  // model file
  | 'gguf-invalid'
  | 'unsupported-type'
  | 'unsupported-arch'
  // text
  | 'tokenizer'
  | 'template'
  // requests
  | 'context-overflow'
  | 'invalid-request'
  | 'aborted';

/** Every code, for validation and tests. */
export const ERROR_CODES: readonly ErrorCode[] = [
  'webgpu-unavailable',
  'feature-missing',
  'device-lost',
  'out-of-memory',
  'network',
  'range-unsupported',
  'storage-quota',
  'gguf-invalid',
  'unsupported-type',
  'unsupported-arch',
  'tokenizer',
  'template',
  'context-overflow',
  'invalid-request',
  'aborted',
];

/** Plain, cloneable data attached to an error (no functions, no class instances). */
export type ErrorDetails = {
  readonly [key: string]: string | number | boolean | null | undefined | readonly (string | number)[];
};

/**
 * An error raised by webgguf. The message names the failed step, the offending value and, where there is one,
 * the next action for the user.
 */
export class LlmError extends Error {
  /** Which layer failed and how; stable across versions. */
  readonly code: ErrorCode;
  /** Structured facts about the failure (byte offsets, limits, URLs, field names). */
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, options?: { details?: ErrorDetails; cause?: unknown }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'LlmError';
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `e` is an `LlmError` (optionally with the given code). */
export function isLlmError(e: unknown, code?: ErrorCode): e is LlmError {
  return e instanceof LlmError && (code === undefined || e.code === code);
}

/** Throws `LlmError('aborted')` when `signal` has been aborted. Call at every await point of long work. */
export function throwIfAborted(signal: AbortSignal | undefined, step = 'operation'): void {
  if (signal?.aborted) {
    throw new LlmError('aborted', `${step} was aborted`, { cause: signal.reason });
  }
}
