/**
 * SentencePiece's precompiled normalisation map (`tokenizer.ggml.precompiled_charsmap`), read as llama.cpp's UGM
 * tokenizer reads it: a little-endian u32 byte size of an XOR-compressed compact double array (XCDA) of u32 units,
 * then NUL-terminated replacement strings. Each unit packs BASE in bits 10–30 (shifted left by 8 more when bit 9 is
 * set), LEAF in bit 8 and the edge label (LCHECK) in bits 0–7; value units set bit 31 and hold a string offset.
 * Walking from the root, the child along byte c of node `i` is `i ^ c` after `i ^= BASE(i)`; the longest key that
 * ends at a LEAF is the match.
 */

import { LlmError } from '../errors.js';

/** The longest charsmap key at a position: how many input bytes it covers and the bytes that replace them. */
export interface CharsmapMatch {
  readonly length: number;
  readonly replacement: Uint8Array;
}

function malformed(what: string): LlmError {
  return new LlmError(
    'tokenizer',
    `tokenizing: the precompiled charsmap is malformed (${what}); re-convert the model`,
    {
      details: { what },
    },
  );
}

/** A parsed precompiled charsmap. */
export class PrecompiledCharsmap {
  /** Shape: (n_units,) u32 */
  private readonly units: Uint32Array;
  /** The replacement strings, each NUL-terminated. */
  private readonly strings: Uint8Array;

  /** `bytes`: the whole `precompiled_charsmap` value (its size was checked by the vocabulary loader). */
  constructor(bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const blob = view.getUint32(0, true);
    const n = Math.floor(blob / 4);
    this.units = new Uint32Array(n);
    for (let i = 0; i < n; i++) this.units[i] = view.getUint32(4 + i * 4, true);
    this.strings = bytes.subarray(4 + blob);
  }

  private unit(i: number): number {
    if (i >= this.units.length) throw malformed(`trie index ${i} is past its ${this.units.length} units`);
    return this.units[i];
  }

  private base(i: number): number {
    const u = this.unit(i);
    return ((u >>> 10) << ((u & 0x200) >>> 6)) >>> 0;
  }

  /** The longest key starting at `input[from]` (a NUL byte ends any key), or null when none matches. */
  match(input: Uint8Array, from: number): CharsmapMatch | null {
    if (this.units.length === 0) return null;
    let longest = 0;
    let valueAt = 0;
    let node = this.base(0);
    for (let i = from; i < input.length; i++) {
      const c = input[i];
      if (c === 0) break;
      node = (node ^ c) >>> 0;
      const u = this.unit(node);
      if ((u & 0x800000ff) >>> 0 !== c) break;
      const leaf = (u >>> 8) & 1;
      node = (node ^ this.base(node)) >>> 0;
      if (leaf) {
        longest = i - from + 1;
        valueAt = this.unit(node) & 0x7fffffff;
      }
    }
    if (longest === 0) return null;
    if (valueAt >= this.strings.length)
      throw malformed(`replacement offset ${valueAt} is past the ${this.strings.length}-byte string table`);
    const end = this.strings.indexOf(0, valueAt);
    if (end < 0) throw malformed(`the replacement at offset ${valueAt} has no terminating NUL`);
    return { length: longest, replacement: this.strings.subarray(valueAt, end) };
  }
}
