/**
 * Named bounds of the GGUF parser, each with the reason it exists. Hostile files never make the parser allocate by
 * their own claims: every count or length is checked against these limits and against the bytes left in the file
 * before anything is allocated (the file-size invariant: N items of at least k bytes each need N·k bytes).
 */

import { LlmError } from '../errors.js';

/** Bounds applied while parsing a GGUF header. Override per call through `parseGguf(source, { limits })`. */
export interface GgufLimits {
  /** Longest metadata string or tensor name in bytes. Chat templates are ~10–100 KB; nothing legitimate nears this. */
  readonly maxStringLength: number;
  /** Most elements in one metadata array. The largest vocabularies (≈ 260k tokens, ≈ 500k merges) fit easily. */
  readonly maxArrayLength: number;
  /** Deepest ARRAY-of-ARRAY nesting. Each level recurses, so this bounds the parser's stack (CWE-674). */
  readonly maxArrayDepth: number;
  /** Most metadata key/value pairs. Real files have tens to a few hundred. */
  readonly maxMetadataKv: number;
  /** Most tensors. Large mixture-of-experts models have a few thousand. */
  readonly maxTensors: number;
  /** Most dimensions of one tensor: ggml's `GGML_MAX_DIMS`. */
  readonly maxDims: number;
  /** Largest `general.alignment`; it must also be a power of two. Keeps padding arithmetic small and safe. */
  readonly maxAlignment: number;
  /**
   * Largest header region (magic … end of tensor infos) loaded into memory. The region is held in one buffer, so this
   * keeps that buffer far below the 1 GiB single-allocation ceiling.
   */
  readonly maxHeaderBytes: number;
  /** First chunk of the header region read from the source; grown geometrically only when the header is larger. */
  readonly initialChunkBytes: number;
}

/** The defaults. */
const DEFAULT_GGUF_LIMITS: GgufLimits = Object.freeze({
  maxStringLength: 64 * 1024 * 1024,
  maxArrayLength: 64 * 1024 * 1024,
  maxArrayDepth: 8,
  maxMetadataKv: 1 << 20,
  maxTensors: 1 << 20,
  maxDims: 4,
  maxAlignment: 1 << 20,
  maxHeaderBytes: 512 * 1024 * 1024,
  initialChunkBytes: 1024 * 1024,
});

/** Smallest encodings, used for the file-size invariant (an item claims at least this many bytes). */
export const MIN_BYTES = Object.freeze({
  /** key (u64 length + ≥ 0 bytes) + u32 type + ≥ 1 byte of value. */
  metadataKv: 8 + 4 + 1,
  /** name (u64 length) + u32 n_dims + one u64 dim + u32 type + u64 offset. */
  tensorInfo: 8 + 4 + 8 + 4 + 8,
  /** a string element: its u64 length. */
  string: 8,
  /** a nested array element: u32 element type + u64 length. */
  array: 4 + 8,
});

/** The largest element count a tensor may have: every index and byte count must stay an exact JS number. */
export const MAX_TENSOR_ELEMENTS = Number.MAX_SAFE_INTEGER;

/** Merges caller overrides with the defaults and validates them (`invalid-request` on a nonsensical override). */
export function resolveLimits(overrides: Partial<GgufLimits> | undefined): GgufLimits {
  const limits: GgufLimits = { ...DEFAULT_GGUF_LIMITS, ...(overrides ?? {}) };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || (value as number) < 1) {
      throw new LlmError('invalid-request', `GGUF limit ${name} must be a positive integer, got ${String(value)}`, {
        details: { field: name },
      });
    }
  }
  if (limits.maxHeaderBytes > 1024 * 1024 * 1024) {
    throw new LlmError(
      'invalid-request',
      `GGUF limit maxHeaderBytes must be at most 1 GiB, got ${limits.maxHeaderBytes}`,
      {
        details: { field: 'maxHeaderBytes', value: limits.maxHeaderBytes },
      },
    );
  }
  return limits;
}

/**
 * Throws `gguf-invalid` unless `count` items of at least `minBytes` each fit in the `remaining` bytes of the file and
 * `count ≤ limit`. Called before allocating anything sized by `count`.
 */
export function checkCount(
  field: string,
  offset: number,
  count: number,
  limit: number,
  limitName: keyof GgufLimits | string,
  minBytes: number,
  remaining: number,
): void {
  if (count > limit) {
    throw new LlmError(
      'gguf-invalid',
      `GGUF ${field} at byte offset ${offset} is ${count}, above the limit ${limitName} = ${limit}; the file is corrupt or hostile`,
      { details: { field, offset, value: count, limit } },
    );
  }
  if (count * minBytes > remaining) {
    throw new LlmError(
      'gguf-invalid',
      `GGUF ${field} at byte offset ${offset} claims ${count} items (≥ ${count * minBytes} bytes) but only ${remaining} ` +
        'bytes remain in the file; the file is truncated or corrupt',
      { details: { field, offset, value: count, remaining } },
    );
  }
}

/** Builds the `gguf-invalid` error for `field` at `offset`; `message` says what is wrong and should say what to do. */
export function invalid(
  field: string,
  offset: number,
  message: string,
  extra?: Record<string, string | number>,
): LlmError {
  return new LlmError('gguf-invalid', `GGUF ${field} at byte offset ${offset}: ${message}`, {
    details: { field, offset, ...(extra ?? {}) },
  });
}

/** Shortens a file-supplied string (a key, a tensor name) for messages: hostile files can make them megabytes long. */
export function shorten(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;
}
