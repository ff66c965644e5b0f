/**
 * `ByteCursor`: a little-endian reader over the prefix of a GGUF file that has been loaded so far. Running past the
 * loaded bytes throws the internal `NeedMoreBytes` signal (the parser loads more and retries; it never escapes the
 * module); running past the end of the file is a truncation and throws `LlmError('gguf-invalid')`.
 */

import { LlmError } from '../errors.js';
import { GgufValueType, type GgufNumericArray } from './types.js';
import { GGUF_TYPED_ARRAYS, LITTLE_ENDIAN_HOST } from './value-types.js';

const BOOL_TYPE: number = GgufValueType.BOOL;

/**
 * Internal "load more bytes and retry" signal (msgpack's `MORE_DATA`). Thrown by `ByteCursor` when a read needs bytes
 * beyond the loaded prefix but inside the file; `parseGguf` catches it and never lets it out.
 */
export class NeedMoreBytes {
  /** `end`: the absolute byte offset (exclusive) that must be loaded for the failed read to succeed. */
  constructor(readonly end: number) {}
}

/**
 * Shared decoder. fatal=false: GGUF strings are UTF-8 but llama.cpp does not validate them (nor do we).
 * ignoreBOM=true keeps a leading U+FEFF: it is data (vocabularies have a "\uFEFF" token), not a byte-order mark.
 */
export const GGUF_UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Sequential little-endian reads over `bytes` = file bytes `[0, bytes.length)` of a file of `fileSize` bytes. */
export class ByteCursor {
  /** Absolute offset of the next read. */
  pos = 0;
  private view: DataView;

  /**
   * @param bytes loaded prefix of the file: `bytes[i]` is file byte `i`.
   * @param fileSize total size of the file; reads past it are truncation errors.
   */
  constructor(
    public bytes: Uint8Array,
    readonly fileSize: number,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Replaces the loaded prefix by a longer one (same file, more bytes); `pos` is kept. */
  extend(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** True when `n` bytes at `pos` are loaded. */
  has(n: number): boolean {
    return this.pos + n <= this.bytes.length;
  }

  /** Bytes left in the whole file after `pos` (not just the loaded prefix). */
  get remainingInFile(): number {
    return this.fileSize - this.pos;
  }

  /**
   * Ensures `n` bytes at `pos` are readable: throws `NeedMoreBytes` when they are in the file but not loaded, and
   * `gguf-invalid` (naming `field`) when the file ends first.
   */
  require(n: number, field: string): void {
    const end = this.pos + n;
    if (end <= this.bytes.length) return;
    if (end > this.fileSize) {
      throw new LlmError(
        'gguf-invalid',
        `GGUF truncated: ${field} at byte offset ${this.pos} needs ${n} bytes but the file ends at byte ${this.fileSize}; ` +
          'the file is incomplete or corrupt — download it again',
        { details: { field, offset: this.pos, needed: n, fileSize: this.fileSize } },
      );
    }
    throw new NeedMoreBytes(end);
  }

  // Scalar readers: each reads one little-endian value at `pos` and advances past it; `field` names it in errors.

  /** Reads a u8. */
  u8(field: string): number {
    this.require(1, field);
    return this.view.getUint8(this.pos++);
  }
  /** Reads an i8. */
  i8(field: string): number {
    this.require(1, field);
    return this.view.getInt8(this.pos++);
  }
  /** Reads a u16. */
  u16(field: string): number {
    this.require(2, field);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  /** Reads an i16. */
  i16(field: string): number {
    this.require(2, field);
    const v = this.view.getInt16(this.pos, true);
    this.pos += 2;
    return v;
  }
  /** Reads a u32. */
  u32(field: string): number {
    this.require(4, field);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** Reads an i32. */
  i32(field: string): number {
    this.require(4, field);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** Reads an f32. */
  f32(field: string): number {
    this.require(4, field);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** Reads an f64. */
  f64(field: string): number {
    this.require(8, field);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** Reads a u64 as bigint (exact). */
  u64(field: string): bigint {
    this.require(8, field);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** Reads an i64 as bigint (exact). */
  i64(field: string): bigint {
    this.require(8, field);
    const v = this.view.getBigInt64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /**
   * Reads a u64 that must be a count or size no larger than `max` (a JS-safe bound). Throws `gguf-invalid` naming
   * `field`, its offset and the bound otherwise. `why` explains the bound in the message.
   */
  u64Bounded(field: string, max: number, why: string): number {
    this.require(8, field);
    const at = this.pos;
    // Two u32 halves instead of a BigInt: this runs once per string, and BigInt garbage adds up over a vocabulary.
    const lo = this.view.getUint32(at, true);
    const hi = this.view.getUint32(at + 4, true);
    this.pos += 8;
    const v = hi * 0x1_0000_0000 + lo; // exact when hi < 2^21; otherwise far above any max ≤ 2^53 anyway
    if (hi >= 0x20_0000 || v > max) {
      const exact = (BigInt(hi) << 32n) | BigInt(lo);
      throw new LlmError(
        'gguf-invalid',
        `GGUF ${field} at byte offset ${at} is ${exact}, above the limit ${max} (${why})`,
        {
          details: { field, offset: at, value: exact.toString(), limit: max },
        },
      );
    }
    return v;
  }

  /** Reads `n` raw bytes as a view (no copy). */
  bytesView(n: number, field: string): Uint8Array {
    this.require(n, field);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /**
   * Reads `n` fixed-size values of GGUF value type `type` (UINT8 … FLOAT64, BOOL) as a typed array: one copy of
   * `n × size` bytes, no per-element work on little-endian hosts. BOOL becomes a Uint8Array of 0/1.
   */
  typedArray(type: number, n: number, field: string): GgufNumericArray {
    const spec = GGUF_TYPED_ARRAYS[type];
    if (spec === undefined) throw new Error(`typedArray: value type ${type} is not fixed-size`);
    const byteLength = n * spec.size;
    this.require(byteLength, field);
    const at = this.pos;
    this.pos += byteLength;
    if (LITTLE_ENDIAN_HOST || spec.size === 1) {
      // Own buffer, offset 0: aligned for every element size (Uint8Array's slice: a Node Buffer's is a view).
      const copy = Uint8Array.prototype.slice.call(this.bytes, at, at + byteLength);
      if (type === BOOL_TYPE) for (let i = 0; i < n; i++) copy[i] = copy[i] !== 0 ? 1 : 0;
      return new spec.of(copy.buffer, 0, n);
    }
    const out = new spec.of(new ArrayBuffer(byteLength), 0, n);
    const dv = new DataView(out.buffer);
    for (let i = 0; i < byteLength; i += spec.size) {
      for (let b = 0; b < spec.size; b++) dv.setUint8(i + spec.size - 1 - b, this.bytes[at + i + b]);
    }
    return out;
  }

  /** Decodes `n` bytes at `pos` as UTF-8 (invalid sequences become U+FFFD, as in llama.cpp's tooling). */
  utf8(n: number, field: string): string {
    return GGUF_UTF8.decode(this.bytesView(n, field));
  }
}
