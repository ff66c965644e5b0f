/**
 * Unigram (`tokenizer.ggml.model = t5`), as llama.cpp's `llm_tokenizer_ugm_session`: normalise the fragment
 * (user-defined tokens pass through, else the longest precompiled-charsmap key is replaced, else one code point is
 * kept; then spaces become U+2581, with a dummy prefix and/or runs merged per `add_space_prefix` and
 * `remove_extra_whitespaces`), and pick the highest-scoring segmentation over the UTF-8 bytes by Viterbi through a
 * byte trie of the normal, user-defined and unused tokens. A code point no token covers costs the unknown token at
 * the lowest normal score minus 10; runs of unknown tokens collapse to one.
 */

import { LlmError } from '../errors.js';
import { ByteTrie } from './byte-trie.js';
import { PrecompiledCharsmap } from './precompiled-charsmap.js';
import { utf8Encode } from './unicode.js';
import { TokenAttr, type Vocab } from './vocab.js';

/** UTF-8 sequence length by the high nibble of a lead byte (llama.cpp `unicode_len_utf8`). */
const UTF8_LEN = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
const ESCAPED_SPACE = Uint8Array.of(0xe2, 0x96, 0x81);
const UNKNOWN_PENALTY = 10;

/** Encodes raw-text fragments with a unigram vocabulary. */
export class UgmEncoder {
  private readonly tokens = new ByteTrie();
  private readonly userDefined = new ByteTrie();
  private readonly hasUserDefined: boolean;
  private readonly charsmap: PrecompiledCharsmap | null;
  /** Score of the unknown token (f32 arithmetic, as llama.cpp). */
  private readonly unknownScore: number;

  constructor(private readonly vocab: Vocab) {
    let min = 3.4028234663852886e38;
    let userDefined = false;
    for (let id = 0; id < vocab.size; id++) {
      const attr = vocab.typeAttrs[id]; // llama.cpp builds the tokenizer before the by-text attribute fixes
      // llama.cpp's is_normal / is_user_defined / is_unused test the attribute bit.
      if (attr & TokenAttr.Normal) min = Math.min(min, vocab.scores[id]);
      if (attr & (TokenAttr.Normal | TokenAttr.UserDefined | TokenAttr.Unused))
        this.tokens.insert(utf8Encode(vocab.tokens[id]), id);
      if (attr & TokenAttr.UserDefined) {
        this.userDefined.insert(utf8Encode(vocab.tokens[id]), id);
        userDefined = true;
      }
    }
    this.hasUserDefined = userDefined;
    this.unknownScore = Math.fround(min - UNKNOWN_PENALTY);
    this.charsmap = vocab.precompiledCharsmap ? new PrecompiledCharsmap(vocab.precompiledCharsmap) : null;
  }

  /** Appends the ids of one raw-text fragment to `out`. */
  encode(text: string, out: number[]): void {
    const norm = this.normalize(utf8Encode(text));
    const n = norm.length;
    if (n === 0) return;
    const unk = this.vocab.unkId ?? -1;
    const bestId = new Int32Array(n + 1).fill(unk);
    const bestFrom = new Int32Array(n + 1);
    const bestScore = new Float64Array(n + 1).fill(-Number.MAX_VALUE);
    bestScore[0] = 0;
    const { tokens, vocab } = this;
    for (let at = 0; at < n; ) {
      const cpLen = Math.min(UTF8_LEN[norm[at] >> 4], n - at);
      const base = bestScore[at];
      let wholeCodepoint = false;
      let end = at;
      let node = tokens.child(0, norm[end++]);
      while (end <= n && node >= 0) {
        const id = tokens.value(node);
        if (id >= 0) {
          if (end - at === cpLen) wholeCodepoint = true;
          const score = base + (vocab.attrs[id] & TokenAttr.UserDefined ? 0 : vocab.scores[id]);
          if (score > bestScore[end]) {
            bestScore[end] = score;
            bestId[end] = id;
            bestFrom[end] = at;
          }
        }
        // llama.cpp reads the string's NUL terminator at the end: only a key with a trailing NUL could go on.
        node = tokens.child(node, end < n ? norm[end] : 0);
        end++;
      }
      if (!wholeCodepoint) {
        const score = base + this.unknownScore;
        const e = at + cpLen;
        if (score > bestScore[e]) {
          bestScore[e] = score;
          bestId[e] = unk;
          bestFrom[e] = at;
        }
      }
      at += cpLen;
    }
    const rev: number[] = [];
    let prevUnknown = false;
    for (let pos = n; ; ) {
      const id = bestId[pos];
      const isUnknown = id === unk;
      if (!(prevUnknown && isUnknown)) rev.push(id);
      if (bestFrom[pos] === 0) break;
      prevUnknown = isUnknown;
      pos = bestFrom[pos];
    }
    for (let i = rev.length - 1; i >= 0; i--) {
      if (rev[i] < 0) {
        throw new LlmError(
          'tokenizer',
          'tokenizing: the text needs the unknown token but the UGM vocabulary has none',
          {
            details: { model: vocab.model },
          },
        );
      }
      out.push(rev[i]);
    }
  }

  /** llama.cpp's UGM `normalize`: charsmap replacement, user-defined pass-through and whitespace handling. */
  normalize(input: Uint8Array): Uint8Array {
    const out = new ByteBuilder(input.length * 3);
    const v = this.vocab;
    const space = v.escapeWhitespaces ? ESCAPED_SPACE : Uint8Array.of(0x20);
    const prepend = v.addSpacePrefix; // treat_whitespace_as_suffix is never set for GGUF vocabularies
    const merge = v.removeExtraWhitespaces;
    let prepended = false;
    let inWord = false;
    for (let at = 0; at < input.length; ) {
      const [piece, consumed] = this.normalizePrefix(input, at);
      for (const c of piece) {
        if (c !== 0x20) {
          if (!inWord) {
            inWord = true;
            if ((prepend && !prepended) || merge) {
              out.push(space);
              prepended = true;
            }
          }
          out.byte(c);
        } else {
          inWord = false;
          if (!merge) out.push(space);
        }
      }
      at += consumed;
    }
    return out.bytes();
  }

  private normalizePrefix(input: Uint8Array, at: number): [piece: Uint8Array, consumed: number] {
    if (this.hasUserDefined) {
      const n = this.userDefined.longestPath(input, at, input.length);
      if (n > 0) return [input.subarray(at, at + n), n];
    }
    const m = this.charsmap?.match(input, at);
    if (m) return [m.replacement, m.length];
    // The input is well-formed UTF-8 (from a JS string), so one whole code point is kept.
    const n = Math.min(UTF8_LEN[input[at] >> 4], input.length - at);
    return [input.subarray(at, at + n), n];
  }
}

/** A growable byte buffer. */
class ByteBuilder {
  private buf: Uint8Array;
  private n = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    grown.set(this.buf.subarray(0, this.n));
    this.buf = grown;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.n++] = b;
  }

  push(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.n);
    this.n += bytes.length;
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}
