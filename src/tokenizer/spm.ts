/**
 * SentencePiece BPE (`tokenizer.ggml.model = llama`), as llama.cpp's `llm_tokenizer_spm_session`: start from single
 * code points, repeatedly merge the adjacent pair whose concatenation is the highest-scoring vocabulary token (ties:
 * leftmost), then emit each symbol's token, or its UTF-8 bytes as `<0xXX>` byte tokens when it has none. The caller
 * applies the space handling: spaces become U+2581 '▁' and a leading '▁' is added at the start and after a special
 * token when `add_space_prefix` is set.
 *
 * Speed without changing results: a merge can only join two code points that are adjacent inside some vocabulary
 * token, so the text is cut wherever the adjacent pair occurs in no token (for most vocabularies: before every '▁'
 * that follows a letter). Merges never cross a cut and their relative order within a segment is unchanged, so the
 * segments are tokenized independently (and short ones cached), exactly as one long run would be.
 */

import { LlmError } from '../errors.js';
import { BigramQueue, mergeBigrams } from './bigram-queue.js';
import { utf8Encode } from './unicode.js';
import type { Vocab } from './vocab.js';

/** Encodes one escaped raw-text fragment with an SPM vocabulary. */
export class SpmEncoder {
  private readonly queue = new BigramQueue();
  private readonly popped = new Int32Array(3);
  /** Byte → `<0xXX>` token id (or the one-character token), -1 when the vocabulary has neither. Shape: (256,) i32 */
  private readonly byteIds: Int32Array;

  constructor(private readonly vocab: Vocab) {
    this.byteIds = new Int32Array(256).fill(-1);
    for (let b = 0; b < 256; b++) {
      const hex = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
      const id = vocab.id(hex) ?? (b < 0x80 ? vocab.id(String.fromCharCode(b)) : undefined);
      if (id !== undefined) this.byteIds[b] = id;
    }
  }

  /** Adjacent code-point pairs found inside any token (key = a * 0x110000 + b), built on first use. */
  private pairs: Set<number> | null = null;
  private readonly cache = new Map<string, readonly number[]>();

  private adjacentPairs(): Set<number> {
    if (this.pairs) return this.pairs;
    const pairs = new Set<number>();
    for (const t of this.vocab.tokens) {
      let prev = -1;
      for (const ch of t) {
        const cp = ch.codePointAt(0)!;
        if (prev >= 0) pairs.add(prev * 0x110000 + cp);
        prev = cp;
      }
    }
    this.pairs = pairs;
    return pairs;
  }

  /** Appends the ids of `text` (already escaped: spaces are '▁') to `out`. */
  encode(text: string, out: number[]): void {
    const pairs = this.adjacentPairs();
    let segStart = 0;
    let prev = -1;
    for (let i = 0; i < text.length; ) {
      const cp = text.codePointAt(i)!;
      const w = cp > 0xffff ? 2 : 1;
      if (prev >= 0 && !pairs.has(prev * 0x110000 + cp)) {
        this.encodeCached(text.slice(segStart, i), out);
        segStart = i;
      }
      prev = cp;
      i += w;
    }
    this.encodeCached(text.slice(segStart), out);
  }

  private encodeCached(segment: string, out: number[]): void {
    if (segment.length > 64) {
      this.encodeSegment(segment, out);
      return;
    }
    let ids = this.cache.get(segment);
    if (!ids) {
      const fresh: number[] = [];
      this.encodeSegment(segment, fresh);
      if (this.cache.size >= 65536) this.cache.clear();
      this.cache.set(segment, fresh);
      ids = fresh;
    }
    for (const id of ids) out.push(id);
  }

  /** The SPM merge loop over one segment. */
  private encodeSegment(text: string, out: number[]): void {
    // Symbols are code points: start offset and length in UTF-16 units, linked in a list.
    const nUnits = text.length;
    if (nUnits === 0) return;
    const start = new Int32Array(nUnits);
    const len = new Int32Array(nUnits);
    let n = 0;
    for (let i = 0; i < nUnits; ) {
      const c = text.charCodeAt(i);
      const w = c >= 0xd800 && c <= 0xdbff && i + 1 < nUnits ? 2 : 1;
      start[n] = i;
      len[n] = w;
      n++;
      i += w;
    }
    const prev = new Int32Array(n);
    const next = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      prev[i] = i - 1;
      next[i] = i + 1 < n ? i + 1 : -1;
    }
    const { queue, popped, vocab } = this;
    const scores = vocab.scores;
    const tryAdd = (left: number, right: number): void => {
      if (left < 0 || right < 0) return;
      const piece = text.slice(start[left], start[right] + len[right]);
      const id = vocab.id(piece);
      if (id === undefined) return;
      queue.push(-scores[id], left, right, piece.length);
    };
    queue.clear();
    for (let i = 1; i < n; i++) tryAdd(i - 1, i);
    mergeBigrams(queue, popped, len, prev, next, tryAdd);
    for (let i = 0; i !== -1; i = next[i]) {
      const piece = text.substr(start[i], len[i]);
      const id = vocab.id(piece);
      if (id !== undefined) {
        out.push(id);
        continue;
      }
      for (const b of utf8Encode(piece)) out.push(this.byteToken(b));
    }
  }

  private byteToken(b: number): number {
    const id = this.byteIds[b];
    if (id >= 0) return id;
    if (this.vocab.unkId !== null) return this.vocab.unkId;
    throw new LlmError(
      'tokenizer',
      `tokenizing: byte 0x${b.toString(16).padStart(2, '0')} has no <0xXX> byte token and the vocabulary has no unknown token`,
      { details: { byte: b } },
    );
  }
}
