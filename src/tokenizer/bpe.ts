/**
 * Byte-level BPE (`tokenizer.ggml.model = gpt2`), as llama.cpp's `llm_tokenizer_bpe_session`: split by the
 * pre-tokenizer regexes, map each pre-token's UTF-8 bytes to GPT-2's printable alphabet, then merge adjacent symbols
 * lowest merge rank first (ties: leftmost) with a priority queue until no ranked pair remains. A symbol left outside
 * the vocabulary falls back to its single-character tokens. Results are cached per pre-token: real text repeats words.
 */

import { LlmError } from '../errors.js';
import { BigramQueue, mergeBigrams } from './bigram-queue.js';
import { FirstIdIndex } from './first-id-index.js';
import { RegexSplitter } from './regex-split.js';
import { byteLevelEncode, toCodepoints, utf8Encode } from './unicode.js';
import type { Vocab } from './vocab.js';

/** Most cached pre-tokens before the cache is reset (bounds memory on adversarial input). */
const MAX_CACHE_ENTRIES = 65536;
/** Pre-tokens longer than this (UTF-16 units) are not cached. */
const MAX_CACHED_WORD = 256;

/** Encodes raw text (no special tokens) with a BPE vocabulary. */
export class BpeEncoder {
  /** "left right" merge text → rank (line index in `tokenizer.ggml.merges`; the first line wins); built lazily. */
  private readonly ranks: FirstIdIndex;
  private readonly splitter: RegexSplitter;
  private readonly cache = new Map<string, readonly number[]>();
  private readonly queue = new BigramQueue();
  /** Per-symbol scratch, grown on demand. Shape: (capacity,) i32 each. */
  private start = new Int32Array(256);
  private len = new Int32Array(256);
  private prev = new Int32Array(256);
  private next = new Int32Array(256);
  private readonly popped = new Int32Array(3);

  constructor(
    private readonly vocab: Vocab,
    merges: readonly string[],
  ) {
    if (!vocab.preSpec)
      throw new LlmError('tokenizer', 'creating the BPE tokenizer: the vocabulary has no pre-tokenizer');
    this.splitter = new RegexSplitter(vocab.preSpec.regexes);
    this.ranks = new FirstIdIndex(merges.length, (i) => {
      const line = merges[i];
      return line.indexOf(' ', 1) < 0 ? ' ' : line;
    });
  }

  /** Builds the merge ranks in idle slices (see `FirstIdIndex.buildWhenIdle`); they are built on first use anyway. */
  buildIndexWhenIdle(): void {
    this.ranks.buildWhenIdle();
  }

  /** Appends the ids of `text` (well-formed, no special tokens) to `out`. */
  encode(text: string, out: number[]): void {
    const cps = toCodepoints(text);
    const lengths = this.splitter.split(cps);
    let cp = 0;
    let cu = 0;
    for (const n of lengths) {
      const cuStart = cu;
      for (let k = 0; k < n; k++) cu += cps[cp++] > 0xffff ? 2 : 1;
      const word = text.slice(cuStart, cu);
      const cached = this.cache.get(word);
      if (cached) {
        for (const id of cached) out.push(id);
        continue;
      }
      const ids: number[] = [];
      this.encodeWord(word, ids);
      if (word.length <= MAX_CACHED_WORD) {
        if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
        this.cache.set(word, ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  private ensure(n: number): void {
    if (n <= this.start.length) return;
    let cap = this.start.length;
    while (cap < n) cap *= 2;
    this.start = new Int32Array(cap);
    this.len = new Int32Array(cap);
    this.prev = new Int32Array(cap);
    this.next = new Int32Array(cap);
  }

  private addBigram(enc: string, left: number, right: number): void {
    if (left < 0 || right < 0) return;
    const l = enc.substr(this.start[left], this.len[left]);
    const r = enc.substr(this.start[right], this.len[right]);
    const rank = this.ranks.get(l + ' ' + r);
    if (rank === undefined) return;
    this.queue.push(rank, left, right, this.len[left] + this.len[right]);
  }

  /** Merges one pre-token. */
  private encodeWord(word: string, out: number[]): void {
    const spec = this.vocab.preSpec!;
    const enc = spec.byteEncode ? byteLevelEncode(word) : word;
    const n = enc.length;
    if (n === 0) return;
    if (this.vocab.ignoreMerges || (spec.gemma4 && /^\n+$/.test(enc))) {
      const whole = this.vocab.id(enc);
      if (whole !== undefined) {
        out.push(whole);
        return;
      }
    }
    this.ensure(n);
    const { start, len, prev, next, queue, popped } = this;
    // Symbols start as code points (byte-level text: one UTF-16 unit each; raw text: one or two).
    let m = 0;
    for (let i = 0; i < n; m++) {
      const c = enc.charCodeAt(i);
      const w = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
      start[m] = i;
      len[m] = w;
      i += w;
    }
    for (let i = 0; i < m; i++) {
      prev[i] = i - 1;
      next[i] = i + 1 < m ? i + 1 : -1;
    }
    queue.clear();
    const addBigram = (left: number, right: number): void => this.addBigram(enc, left, right);
    for (let i = 1; i < m; i++) addBigram(i - 1, i);
    mergeBigrams(queue, popped, len, prev, next, addBigram);
    for (let i = 0; i !== -1; i = next[i]) {
      const piece = enc.substr(start[i], len[i]);
      const id = this.vocab.id(piece);
      if (id !== undefined) {
        out.push(id);
        continue;
      }
      if (!spec.byteEncode) {
        // Raw-text BPE (Gemma 4): each UTF-8 byte of the symbol as its `<0xXX>` token, when the vocabulary has it.
        for (const b of utf8Encode(piece)) {
          const bt = this.vocab.id(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
          if (bt !== undefined) out.push(bt);
        }
        continue;
      }
      // llama.cpp looks up each UTF-8 byte of the symbol as a one-byte token: only ASCII characters can match.
      for (let k = 0; k < piece.length; k++) {
        if (piece.charCodeAt(k) >= 0x80) continue;
        const b = this.vocab.id(piece[k]);
        if (b !== undefined) out.push(b);
      }
    }
  }
}
