/**
 * `VocabTokenizer`: the `Tokenizer` over a loaded `Vocab` — llama.cpp's `llama_vocab::impl::tokenize` (special-token
 * partition, then SPM, BPE or WPM per raw fragment, BOS/EOS/SEP by the vocabulary's flags) and detokenization.
 */

import { LlmError } from '../errors.js';
import { BpeEncoder } from './bpe.js';
import { encodeHybridDna, encodeWhitespaceModel } from './bpe-variants.js';
import { Detokenizer, Utf8StreamDecoder } from './detokenizer.js';
import { partitionSpecial } from './special-partition.js';
import { SpmEncoder } from './spm.js';
import type { DecodeOptions, EncodeOptions, StreamDecoder, Tokenizer } from './tokenizer.js';
import { toWellFormed } from './unicode.js';
import { TokenAttr, type Vocab } from './vocab.js';
import { encodeTestVocab } from './test-vocab.js';
import { type FragmentEncoder, fragmentEncoderFor } from './fragment-encoder-registry.js';

/** A tokenizer for one GGUF vocabulary. Create it with `createTokenizer`. */
export class VocabTokenizer implements Tokenizer {
  readonly model: string;
  readonly pre: string;
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly eogIds: ReadonlySet<number>;
  /** End-of-turn token (`<|eot_id|>`, `<|im_end|>`, `<end_of_turn>` …) when the vocabulary has one. */
  readonly eotId: number | null;
  private readonly spm: SpmEncoder | null;
  private readonly bpe: BpeEncoder | null;
  private readonly wpm: FragmentEncoder | null;
  /** UGM, RWKV or PLaMo-2. */
  private readonly other: FragmentEncoder | null;
  private readonly detok: Detokenizer;

  constructor(
    /** The loaded vocabulary (attributes, special ids, flags). */
    readonly vocab: Vocab,
    merges: readonly string[] | undefined,
  ) {
    this.model = vocab.model;
    this.pre = vocab.pre;
    this.vocabSize = vocab.size;
    this.bosId = vocab.bosId;
    this.eosId = vocab.eosId;
    this.eotId = vocab.eotId;
    // What `encode(…, { addSpecial: true })` does: llama.cpp's RWKV, PLaMo-2 and test paths add nothing whatever the
    // flags say.
    const adds = vocab.type !== 'rwkv' && vocab.type !== 'plamo2' && vocab.type !== 'test';
    this.addBos = adds && vocab.addBos;
    this.addEos = adds && vocab.addEos;
    this.eogIds = vocab.eogIds;
    this.spm = vocab.type === 'spm' ? new SpmEncoder(vocab) : null;
    // WordPiece, unigram, RWKV and PLaMo-2 live in a lazy chunk (fragment-encoder-registry.ts).
    const type = vocab.type;
    this.wpm = type === 'wpm' ? fragmentEncoderFor(vocab, type) : null;
    this.other =
      type === 'ugm' || type === 'rwkv' || type === 'plamo2'
        ? fragmentEncoderFor(vocab, type)
        : type === 'test'
          ? { encode: (text: string, out: number[]) => encodeTestVocab(text, vocab.size, out) }
          : null;
    if (vocab.type === 'bpe') {
      if (!merges && vocab.preSpec?.mergesOptional !== true) {
        throw new LlmError(
          'tokenizer',
          "creating the BPE tokenizer: 'tokenizer.ggml.merges' is missing; re-convert the model",
        );
      }
      this.bpe = new BpeEncoder(vocab, merges ?? []);
    } else {
      this.bpe = null;
    }
    this.detok = new Detokenizer(vocab);
  }

  /** Builds the vocabulary's text → id map and the BPE merge ranks in idle slices (each is built on first use anyway). */
  buildIndexesWhenIdle(): void {
    this.vocab.buildIndexWhenIdle();
    this.bpe?.buildIndexWhenIdle();
  }

  tokenText(id: number): string {
    this.vocab.checkId(id, 'reading token text');
    return this.vocab.tokens[id];
  }

  isControl(id: number): boolean {
    this.vocab.checkId(id, 'reading token type');
    return (this.vocab.attrs[id] & (TokenAttr.Control | TokenAttr.Unknown)) !== 0;
  }

  /** Id of a token by its exact vocabulary text, or null. */
  tokenId(text: string): number | null {
    return this.vocab.id(text) ?? null;
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    if (typeof text !== 'string') {
      throw new LlmError('tokenizer', `tokenizing: expected a string but got ${typeof text}`);
    }
    const addSpecial = options.addSpecial ?? false;
    const src = toWellFormed(text);
    const frags = partitionSpecial(this.vocab, src, options.parseSpecial ?? false);
    const v = this.vocab;
    const out: number[] = [];
    if (this.spm) {
      if (addSpecial && v.addBos && v.bosId !== null) out.push(v.bosId);
      let prevSpecial = true; // a leading space is added at the start and after each special token
      for (const f of frags) {
        if (f.kind === 'token') {
          out.push(f.id);
          prevSpecial = true;
          continue;
        }
        const raw = (v.addSpacePrefix && prevSpecial ? ' ' : '') + src.slice(f.start, f.end);
        this.spm.encode(raw.replaceAll(' ', '\u2581'), out);
        prevSpecial = false;
      }
      if (addSpecial && v.addEos && v.eosId !== null) out.push(v.eosId);
    } else if (this.bpe) {
      if (addSpecial && v.addBos && v.bosId !== null) out.push(v.bosId);
      for (const f of frags) {
        if (f.kind === 'token') out.push(f.id);
        else {
          const raw = src.slice(f.start, f.end);
          const text = v.escapeWhitespaces ? raw.replaceAll(' ', '\u2581') : raw;
          if (v.model === 'whitespace') encodeWhitespaceModel(this.bpe, v, text, out);
          else if (v.model === 'hybriddna') encodeHybridDna(this.bpe, v, text, out);
          else this.bpe.encode(text, out);
        }
      }
      if (addSpecial && v.addEos && v.eosId !== null) out.push(v.eosId);
    } else if (this.wpm) {
      if (addSpecial && v.bosId !== null) out.push(v.bosId);
      for (const f of frags) {
        if (f.kind === 'token') out.push(f.id);
        else this.wpm.encode(src.slice(f.start, f.end), out);
      }
      if (addSpecial && v.sepId !== null) out.push(v.sepId);
    } else if (this.other) {
      // UGM adds BOS/EOS per the vocabulary's flags; llama.cpp's RWKV, PLaMo-2 and test paths never add any.
      const ugm = v.type === 'ugm';
      if (ugm && addSpecial && v.addBos && v.bosId !== null) out.push(v.bosId);
      for (const f of frags) {
        if (f.kind === 'token') out.push(f.id);
        else this.other.encode(src.slice(f.start, f.end), out);
      }
      if (ugm && addSpecial && v.addEos && v.eosId !== null) out.push(v.eosId);
    }
    return out;
  }

  private checkAll(ids: readonly number[], step: string): void {
    if (!Array.isArray(ids)) throw new LlmError('tokenizer', `${step}: expected an array of token ids`);
    for (const id of ids) this.vocab.checkId(id, step);
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    this.checkAll(ids, 'detokenizing');
    return this.detok.text(ids, options.renderSpecial ?? false);
  }

  tokenBytes(id: number, options: DecodeOptions = {}): Uint8Array {
    this.vocab.checkId(id, 'detokenizing a token');
    return this.detok.piece(id, options.renderSpecial ?? false).slice();
  }

  /** The text of one token as llama.cpp's `token_to_piece` gives it (invalid UTF-8 as U+FFFD). */
  tokenPiece(id: number, options: DecodeOptions = {}): string {
    return new TextDecoder().decode(this.tokenBytes(id, options));
  }

  createStreamDecoder(options: DecodeOptions = {}): StreamDecoder {
    const render = options.renderSpecial ?? false;
    return new Utf8StreamDecoder((id) => {
      this.vocab.checkId(id, 'stream-detokenizing a token');
      return this.detok.piece(id, render);
    });
  }
}
