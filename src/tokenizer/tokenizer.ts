/**
 * The `Tokenizer` interface: text ⇄ token ids exactly as llama.cpp does it for a GGUF vocab. Built by
 * `createTokenizer` in `tokenizer/index.ts` from GGUF metadata (plain data, not a file).
 */

/** Options of `encode`. */
export interface EncodeOptions {
  /** Add BOS/EOS as the vocab's `add_bos_token`/`add_eos_token` say (llama.cpp `add_special`). Default false. */
  readonly addSpecial?: boolean;
  /** Control and user-defined tokens written in the text become single ids (llama.cpp `parse_special`). Default false. */
  readonly parseSpecial?: boolean;
}

/** Options of `decode`. */
export interface DecodeOptions {
  /** Render control tokens as their text (default false: they are dropped). */
  readonly renderSpecial?: boolean;
}

/** Incremental detokenizer that never emits a UTF-8 sequence split across tokens. */
export interface StreamDecoder {
  /** Adds one token; returns the text that became complete (possibly ''). */
  push(id: number): string;
  /** Returns whatever is pending (incomplete bytes become U+FFFD). */
  flush(): string;
}

/** A vocabulary with its tokenization algorithm. */
export interface Tokenizer {
  /** `tokenizer.ggml.model`: 'llama' (SPM), 'gpt2' | 'gemma4' | 'whitespace' | 'hybriddna' (BPE), 'bert' (WPM), 't5' (UGM), 'rwkv', 'plamo2', 'test'. */
  readonly model: string;
  /** `tokenizer.ggml.pre` (BPE pre-tokenizer), or '' when not applicable. */
  readonly pre: string;
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  /** End-of-generation tokens: eos, eot, eom and well-known turn-end tokens present in the vocab. */
  readonly eogIds: ReadonlySet<number>;
  /** End-of-turn token (`<|eot_id|>`, `<|im_end|>`, `<end_of_turn>` …), null when the vocab has none. Optional. */
  readonly eotId?: number | null;
  /** Id of the token whose vocab text is exactly `text`, or null. Optional. */
  tokenId?(text: string): number | null;
  /** The token's text as stored in the vocab (e.g. '<|im_end|>', '▁the', 'Ġthe'). */
  tokenText(id: number): string;
  /** True for control tokens (and other special types llama.cpp does not render by default). */
  isControl(id: number): boolean;
  encode(text: string, options?: EncodeOptions): number[];
  decode(ids: readonly number[], options?: DecodeOptions): string;
  /** The bytes one token stands for when detokenized (▁ → space, byte tokens, byte-level BPE decoded, RWKV unescaped). */
  tokenBytes(id: number, options?: DecodeOptions): Uint8Array;
  createStreamDecoder(options?: DecodeOptions): StreamDecoder;
}
