/**
 * `ByteSource`: random access to the bytes of a model file, wherever they live (HTTP, a `File`/`Blob`, a Node path,
 * the IndexedDB model store). The GGUF parser and the weight uploader read only through this interface, so a model is
 * never held whole in memory.
 */

import { LlmError } from '../errors.js';

/** Random-access, read-only bytes of one file. */
export interface ByteSource {
  /** Total size in bytes. */
  readonly size: number;
  /** A human-readable name for messages (URL, file name, path). */
  readonly name: string;
  /**
   * Reads `length` bytes starting at `offset`. Resolves with exactly `length` bytes, or rejects with an `LlmError`
   * (`network`, `gguf-invalid` for a range beyond `size`, `aborted`). `length` may be 0.
   */
  read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * Reads `dst.byteLength` bytes starting at `offset` straight into `dst` (which may view shared or backend memory),
   * with the errors of `read`. Optional: `readInto` (below) falls back to `read` and a copy.
   */
  readInto?(offset: number, dst: Uint8Array, signal?: AbortSignal): Promise<void>;
  /** Releases handles (file descriptors, connections). Reads after `close` reject. Optional. */
  close?(): Promise<void>;
}

/** Reads `[offset, offset + dst.byteLength)` of `source` into `dst`: its own `readInto`, else `read` and a copy. */
export async function readInto(
  source: ByteSource,
  offset: number,
  dst: Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  if (source.readInto) return source.readInto(offset, dst, signal);
  dst.set(await source.read(offset, dst.byteLength, signal));
}

/** A `ByteSource` over bytes already in memory (tests, small files, the writer's output). */
export class MemoryByteSource implements ByteSource {
  readonly size: number;
  constructor(
    private readonly bytes: Uint8Array,
    readonly name = 'memory',
  ) {
    this.size = bytes.byteLength;
  }
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (signal?.aborted) {
      throw new LlmError('aborted', `read of ${this.name} was aborted`);
    }
    if (
      !Number.isSafeInteger(offset) ||
      !Number.isSafeInteger(length) ||
      offset < 0 ||
      length < 0 ||
      offset + length > this.size
    ) {
      throw new LlmError(
        'gguf-invalid',
        `read of ${length} bytes at offset ${offset} is outside ${this.name} (${this.size} bytes)`,
        {
          details: { offset, length, size: this.size },
        },
      );
    }
    return this.bytes.subarray(offset, offset + length);
  }
}

/**
 * Throws the same `LlmError('gguf-invalid')` as `MemoryByteSource` when `[offset, offset + length)` is not inside a
 * source of `size` bytes (non-integer, negative, or past the end). Shared by every `ByteSource` implementation.
 */
export function checkReadRange(name: string, size: number, offset: number, length: number): void {
  if (
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length) ||
    offset < 0 ||
    length < 0 ||
    offset + length > size
  ) {
    throw new LlmError(
      'gguf-invalid',
      `read of ${length} bytes at offset ${offset} is outside ${name} (${size} bytes)`,
      {
        details: { offset, length, size },
      },
    );
  }
}
