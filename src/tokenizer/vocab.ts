/**
 * `Vocab`: a GGUF vocabulary as llama.cpp loads it (`llama_vocab::impl::load`): token texts, scores and attributes,
 * the special-token ids with their per-type defaults, the add-BOS/EOS/SEP flags, the end-of-generation set found by
 * token text, the per-model attribute fixes (phi-3 RSTRIP) and the special-token list used to split text before
 * tokenizing. Everything the algorithms (SPM, BPE, WPM, UGM, RWKV, PLaMo-2) and the detokenizer share.
 */

import { LlmError } from '../errors.js';
import {
  type TokenizerMetadata,
  readBool,
  readNumberArray,
  readString,
  readStringArray,
  readUint,
} from './metadata-reader.js';
import { type PreTokenizerSpec, getPreTokenizer } from './pre-tokenizers.js';
import { utf8ByteLength } from './unicode.js';
import { EOG_TEXTS, EOT_TEXTS, FIM_CONTROL_TEXTS, FIM_EOG_TEXTS } from './special-token-texts.js';
import { FirstIdIndex } from './first-id-index.js';

/** Token attributes (llama.h `llama_token_attr`), a bit set. */
export enum TokenAttr {
  Undefined = 0,
  Unknown = 1 << 0,
  Unused = 1 << 1,
  Normal = 1 << 2,
  Control = 1 << 3,
  UserDefined = 1 << 4,
  Byte = 1 << 5,
  /** @public Not read here; kept so the bit set mirrors llama.h in full. */
  Normalized = 1 << 6,
  Lstrip = 1 << 7,
  Rstrip = 1 << 8,
  /** @public Not read here; kept so the bit set mirrors llama.h in full. */
  SingleWord = 1 << 9,
}

/** `tokenizer.ggml.token_type` values (llama.h `llama_token_type`) → attribute. */
const TYPE_TO_ATTR: readonly number[] = [
  TokenAttr.Undefined, // 0 UNDEFINED
  TokenAttr.Normal, // 1 NORMAL
  TokenAttr.Unknown, // 2 UNKNOWN
  TokenAttr.Control, // 3 CONTROL
  TokenAttr.UserDefined, // 4 USER_DEFINED
  TokenAttr.Unused, // 5 UNUSED
  TokenAttr.Byte, // 6 BYTE
];

/** The algorithm a vocabulary uses. */
export type VocabType = 'spm' | 'bpe' | 'wpm' | 'ugm' | 'rwkv' | 'plamo2' | 'test';

const MODEL_TO_TYPE: Readonly<Record<string, VocabType>> = {
  llama: 'spm',
  gpt2: 'bpe',
  gemma4: 'bpe',
  hybriddna: 'bpe',
  whitespace: 'bpe',
  bert: 'wpm',
  t5: 'ugm',
  rwkv: 'rwkv',
  plamo2: 'plamo2',
  test: 'test',
};

/** U+E000: the suffix that keeps hybriddna's DNA k-mers apart from equal BPE tokens; stripped from their texts. */
export const DNA_KMER_MARKER = '\ue000';

/** `tokenizer.ggml.precompiled_charsmap` (an i8/u8 array) as bytes, checked as llama.cpp checks it; null when absent. */
function readCharsmap(meta: TokenizerMetadata): Uint8Array | null {
  const key = 'tokenizer.ggml.precompiled_charsmap';
  const raw = readNumberArray(meta, key);
  if (raw === undefined) return null;
  const bytes = Uint8Array.from(raw, (x) => x & 0xff);
  const blob = bytes.length >= 4 ? new DataView(bytes.buffer).getUint32(0, true) : -1;
  if (blob < 0 || blob + 4 >= bytes.length) {
    throw new LlmError(
      'tokenizer',
      `creating the UGM tokenizer: '${key}' is malformed (${bytes.length} bytes, trie size ${blob}); re-convert the model`,
      {
        details: { key, bytes: bytes.length },
      },
    );
  }
  return bytes;
}

/** '<|channel|>' and the other gpt-oss harmony texts llama.cpp makes USER_DEFINED. */
const HARMONY_USER_TEXTS = ['<|channel|>', '<|message|>', '<|start|>', '<|constrain|>'];

/** Every text the constructor's by-text fixes look up: found in one pass, before the full map exists. */
const CONSTRUCTOR_TEXTS: readonly string[] = [
  ...EOG_TEXTS,
  ...EOT_TEXTS,
  ...FIM_EOG_TEXTS.flatMap(([, t]) => t),
  ...FIM_CONTROL_TEXTS.flatMap(([, t]) => t),
  ...HARMONY_USER_TEXTS,
  ...['<|eom_id|>', '<|end|>', '<|call|>', '<|calls|>', '<|return|>', '<|flush|>', '<|tool_response>', '</s>'],
  ...['<oov>', '<mask>', '[MASK]', '<unk>', '<s>', '<|endoftext|>'],
];

/** A loaded vocabulary. Immutable after construction. */
export class Vocab {
  readonly type: VocabType;
  /** `tokenizer.ggml.model`. */
  readonly model: string;
  /** `tokenizer.ggml.pre` ('' when absent or not a BPE vocab). */
  readonly pre: string;
  /** Pre-tokenizer (BPE only). */
  readonly preSpec: PreTokenizerSpec | null;
  /** Token texts by id. */
  readonly tokens: readonly string[];
  /** SPM scores by id. Shape: (n_vocab,) f32 */
  readonly scores: Float32Array;
  /** Attribute bits by id. Shape: (n_vocab,) u16 */
  readonly attrs: Uint16Array;
  /**
   * Attribute bits from `tokenizer.ggml.token_type` alone, before the by-text fixes (EOG/FIM → control …): what
   * llama.cpp's UGM, RWKV and PLaMo-2 tokenizers are built from. Shape: (n_vocab,) u16
   */
  readonly typeAttrs: Uint16Array;
  /** Text → id (the first id wins, as in llama.cpp's `emplace`), built on first use or when idle. */
  private readonly index: FirstIdIndex;
  /** The by-text lookups of the constructor's fixes, answered in one pass before the map exists. */
  private readonly known: ReadonlyMap<string, number>;
  /** Longest token text in UTF-8 bytes. */
  readonly maxTokenBytes: number;
  readonly bosId: number | null;
  readonly eosId: number | null;
  readonly eotId: number | null;
  readonly eomId: number | null;
  readonly unkId: number | null;
  readonly sepId: number | null;
  readonly padId: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSep: boolean;
  readonly addSpacePrefix: boolean;
  /** Spaces become U+2581 before tokenizing (SPM, UGM, SPM-style BPE such as Gemma 4). */
  readonly escapeWhitespaces: boolean;
  /** UGM: runs of spaces collapse to one and leading/trailing spaces go (`tokenizer.ggml.remove_extra_whitespaces`). */
  readonly removeExtraWhitespaces: boolean;
  /** UGM: `tokenizer.ggml.precompiled_charsmap` bytes (XCDA trie + replacement strings), null when absent. */
  readonly precompiledCharsmap: Uint8Array | null;
  readonly cleanSpaces: boolean;
  readonly ignoreMerges: boolean;
  /** BERT normalizer: lower-case, and strip accents (NFD, drop marks). */
  readonly lowercase: boolean;
  readonly stripAccents: boolean;
  /** End-of-generation ids. */
  readonly eogIds: ReadonlySet<number>;
  /** Control, user-defined and unknown tokens, longest text first: matched in text before tokenizing. */
  readonly specialTokens: readonly number[];

  constructor(meta: TokenizerMetadata) {
    const model = readString(meta, 'tokenizer.ggml.model');
    if (model === undefined) {
      throw new LlmError(
        'tokenizer',
        "creating the tokenizer: 'tokenizer.ggml.model' is missing; this GGUF has no vocabulary",
      );
    }
    if (model === 'none' || model === 'no_vocab') {
      throw new LlmError(
        'tokenizer',
        `creating the tokenizer: 'tokenizer.ggml.model' = '${model}': this GGUF has no vocabulary; pass token ids`,
        {
          details: { model },
        },
      );
    }
    const type = Object.hasOwn(MODEL_TO_TYPE, model) ? MODEL_TO_TYPE[model] : undefined;
    if (!type) {
      throw new LlmError(
        'tokenizer',
        `creating the tokenizer: vocabulary type 'tokenizer.ggml.model' = '${model}' is not supported (supported: ${Object.keys(MODEL_TO_TYPE).join(', ')})`,
        { details: { model } },
      );
    }
    this.model = model;
    this.type = type;
    const tokens = readStringArray(meta, 'tokenizer.ggml.tokens');
    if (!tokens || tokens.length === 0) {
      throw new LlmError(
        'tokenizer',
        "creating the tokenizer: 'tokenizer.ggml.tokens' is missing or empty; re-convert the model",
      );
    }
    const n = tokens.length;

    // Per-type defaults (llama.cpp): special ids, then flags.
    let bos: number | null = 1,
      eos: number | null = 2,
      unk: number | null = 0,
      sep: number | null = null;
    let pad: number | null = null;
    let addBos = false,
      addEos = false,
      addSep = false,
      addSpacePrefix = false,
      cleanSpaces = false;
    let ignoreMerges = false,
      escapeWhitespaces = true;
    this.pre = '';
    this.preSpec = null;
    this.precompiledCharsmap = null;
    if (type === 'spm') {
      addSpacePrefix = true;
      addBos = true;
    } else if (type === 'wpm') {
      [bos, eos, unk, sep, pad] = [101, null, 100, 102, 0];
      addBos = true;
      addSep = true;
      cleanSpaces = true;
    } else if (type === 'ugm') {
      [bos, eos, unk, pad] = [null, 1, 2, 0];
      addEos = true;
      this.precompiledCharsmap = readCharsmap(meta);
    } else if (type === 'rwkv') {
      [bos, eos, unk] = [null, null, null];
    } else if (type === 'plamo2') {
      [bos, eos, unk, pad] = [1, 2, 0, 3];
    } else if (type === 'test') {
      [bos, eos, unk] = [null, null, null];
    } else {
      // llama.cpp: `gemma4` is BPE with no default special ids, and its pre-tokenizer is always 'gemma4'.
      [bos, eos, unk] = model === 'gemma4' ? [null, null, null] : [11, 11, null];
      this.pre = model === 'gemma4' ? 'gemma4' : (readString(meta, 'tokenizer.ggml.pre') ?? '');
      const spec = getPreTokenizer(this.pre);
      this.preSpec = spec;
      cleanSpaces = spec.cleanSpaces;
      ignoreMerges = spec.ignoreMerges;
      escapeWhitespaces = spec.escapeWhitespaces;
      addBos = spec.addBos;
      addSep = spec.addSep;
      if (spec.noBos) bos = null;
    }
    addSpacePrefix = readBool(meta, 'tokenizer.ggml.add_space_prefix') ?? addSpacePrefix;
    this.removeExtraWhitespaces = readBool(meta, 'tokenizer.ggml.remove_extra_whitespaces') ?? false;
    this.escapeWhitespaces = escapeWhitespaces;

    // Tokens, scores, attributes.
    const scoresIn = readNumberArray(meta, 'tokenizer.ggml.scores');
    const typesIn = readNumberArray(meta, 'tokenizer.ggml.token_type');
    if (scoresIn && scoresIn.length < n) throw this.shortArray('tokenizer.ggml.scores', scoresIn.length, n);
    if (typesIn && typesIn.length < n) throw this.shortArray('tokenizer.ggml.token_type', typesIn.length, n);
    const texts = new Array<string>(n);
    const scores = new Float32Array(n);
    const attrs = new Uint16Array(n);
    let maxBytes = 0;
    for (let i = 0; i < n; i++) {
      const word = tokens[i] === '' ? `[EMPTY_${i}]` : tokens[i];
      texts[i] = word;
      if (word.length * 3 > maxBytes) maxBytes = Math.max(maxBytes, utf8ByteLength(word));
      scores[i] = scoresIn ? scoresIn[i] : 0;
      attrs[i] = typesIn ? (TYPE_TO_ATTR[typesIn[i]] ?? TokenAttr.Undefined) : TokenAttr.Normal;
    }
    // The map is keyed by the texts as read (hybriddna's k-mers keep their marker there).
    const keys = model === 'hybriddna' ? texts.slice() : texts;
    this.index = new FirstIdIndex(n, (i) => keys[i]);
    const unusedControl: number[] = []; // llama.cpp marks control tokens named '…unused…' UNUSED (first ids only)
    for (let i = 0; i < n; i++) if (attrs[i] & TokenAttr.Control && texts[i].includes('unused')) unusedControl.push(i);
    const map = this.index.firstOf([...CONSTRUCTOR_TEXTS, ...unusedControl.map((i) => texts[i])]);
    this.known = map;
    if (model === 'hybriddna') {
      // llama.cpp: the k-mers after '<oov>' lose their marker in the text (so they detokenize to bare DNA) but are
      // still found by it.
      const oov = map.get('<oov>');
      if (oov !== undefined) {
        for (let i = oov + 1; i < n; i++) {
          const t = texts[i];
          if (t.length > DNA_KMER_MARKER.length && t.endsWith(DNA_KMER_MARKER))
            texts[i] = t.slice(0, -DNA_KMER_MARKER.length);
        }
      }
    }
    this.tokens = texts;
    this.scores = scores;
    this.attrs = attrs;
    this.typeAttrs = attrs.slice();
    this.maxTokenBytes = maxBytes;

    // Special ids from metadata (an out-of-range value keeps the default; an out-of-range default is disabled).
    const pick = (key: string, def: number | null): number | null => {
      let id = def !== null && def >= n ? null : def;
      const v = readUint(meta, key);
      if (v !== undefined && v >= 0 && v < n) id = v;
      return id;
    };
    this.bosId = pick('tokenizer.ggml.bos_token_id', bos);
    this.eosId = pick('tokenizer.ggml.eos_token_id', eos);
    let eot = pick('tokenizer.ggml.eot_token_id', null);
    let eom = pick('tokenizer.ggml.eom_token_id', null);
    this.unkId = pick('tokenizer.ggml.unknown_token_id', unk);
    this.sepId = pick('tokenizer.ggml.seperator_token_id', sep);
    this.padId = pick('tokenizer.ggml.padding_token_id', pad);
    // llama.cpp forces add_bos for the Gemma 4 pre-tokenizer (ggml-org/llama.cpp#21500).
    this.addBos = (readBool(meta, 'tokenizer.ggml.add_bos_token') ?? addBos) || this.preSpec?.gemma4 === true;
    this.addEos = readBool(meta, 'tokenizer.ggml.add_eos_token') ?? addEos;
    this.addSep = readBool(meta, 'tokenizer.ggml.add_sep_token') ?? addSep;
    this.addSpacePrefix = addSpacePrefix;
    this.cleanSpaces = cleanSpaces;
    this.ignoreMerges = ignoreMerges;
    this.lowercase = readBool(meta, 'tokenizer.ggml.normalizer.lowercase') ?? this.preSpec?.lowercase ?? true;
    this.stripAccents = readBool(meta, 'tokenizer.ggml.normalizer.strip_accents') ?? this.lowercase;
    if (this.addBos && this.bosId === null) throw this.missingSpecial('add_bos_token', 'bos_token_id');
    if (this.addEos && this.eosId === null) throw this.missingSpecial('add_eos_token', 'eos_token_id');

    // Tokens llama.cpp recognises by text when the file names none (EOT, EOM, FIM) are forced to CONTROL; ids the
    // file names keep their type (RWKV's EOT is the plain "\n\n" token).
    const makeControl = (id: number): void => {
      attrs[id] |= TokenAttr.Control;
    };
    const eog = new Set<number>();
    for (const [key, fimTexts] of FIM_EOG_TEXTS) {
      let id = pick(key, null);
      if (id === null) {
        id = this.findFirst(fimTexts);
        if (id !== null) makeControl(id);
      }
      if (id !== null) eog.add(id);
    }
    for (const [keys, texts] of FIM_CONTROL_TEXTS) {
      if (keys.some((k) => pick(k, null) !== null)) continue;
      for (const t of texts) {
        const id = map.get(t);
        if (id !== undefined) makeControl(id);
      }
    }
    if (eot === null) {
      eot = this.findFirst([...EOT_TEXTS]);
      if (eot !== null) makeControl(eot);
    }
    if (eom === null) {
      eom = this.findFirst(['<|eom_id|>']);
      if (eom !== null) makeControl(eom);
    }
    // As llama.cpp's pass over its text → id map (first ids, in id order): EOG texts, unused controls, harmony texts.
    const eogFound = [...EOG_TEXTS].flatMap((t) => map.get(t) ?? []).sort((a, b) => a - b);
    for (const id of eogFound) {
      eog.add(id);
      makeControl(id);
    }
    for (const id of unusedControl) if (map.get(texts[id]) === id) attrs[id] |= TokenAttr.Unused;
    for (const t of HARMONY_USER_TEXTS) {
      const id = map.get(t);
      if (id !== undefined) attrs[id] = TokenAttr.UserDefined;
    }
    for (const id of [this.eosId, eot, eom]) if (id !== null) eog.add(id);
    this.fixHarmonyEnd(eog);
    this.fixToolResponseEos(eog);
    this.eotId = eot;
    this.eomId = eom;
    this.eogIds = eog;

    const special: number[] = [];
    for (let i = 0; i < n; i++) {
      if (attrs[i] & (TokenAttr.Control | TokenAttr.UserDefined | TokenAttr.Unknown)) special.push(i);
    }
    // Longest first by UTF-8 bytes, as llama.cpp sorts its special-token cache (ties: by id).
    const bytes = new Map(special.map((id) => [id, utf8ByteLength(texts[id])]));
    special.sort((a, b) => bytes.get(b)! - bytes.get(a)! || a - b);
    this.specialTokens = special;
    this.applyModelAttrs(meta);
  }

  private findFirst(texts: readonly string[]): number | null {
    // llama.cpp takes whichever its hash map yields first; the first text in list order is a stable, sensible choice.
    for (const t of texts) {
      const id = this.known.get(t);
      if (id !== undefined) return id;
    }
    return null;
  }

  /** o200k-harmony / solar-open: with '<|return|>' and '<|call|>' present, '<|end|>' is not end-of-generation. */
  private fixHarmonyEnd(eog: Set<number>): void {
    const has = (t: string): boolean => {
      const id = this.known.get(t);
      return id !== undefined && eog.has(id);
    };
    const end = this.known.get('<|end|>');
    if (end === undefined || !eog.has(end)) return;
    const hasCall = has('<|call|>') || has('<|calls|>');
    if ((has('<|return|>') && hasCall) || (hasCall && has('<|flush|>'))) {
      eog.delete(end);
      this.attrs[end] = TokenAttr.UserDefined;
    }
  }

  /** Gemma 4 / PaddleOCR: with '<|tool_response>' end-of-generation, '</s>' is neither end-of-generation nor control. */
  private fixToolResponseEos(eog: Set<number>): void {
    const tool = this.known.get('<|tool_response>');
    const s = this.known.get('</s>');
    if (tool === undefined || s === undefined || !eog.has(tool) || !eog.has(s)) return;
    eog.delete(s);
    this.attrs[s] = TokenAttr.Normal;
  }

  /** Per-model attribute fixes llama.cpp applies by name (phi-3: RSTRIP on special tokens). */
  private applyModelAttrs(meta: TokenizerMetadata): void {
    const name = (readString(meta, 'general.name') ?? '').toLowerCase();
    const pre = this.pre;
    const arch = readString(meta, 'general.architecture') ?? '';
    const set = (text: string, attr: TokenAttr, on: boolean): void => {
      const id = this.known.get(text);
      if (id !== undefined) this.attrs[id] = on ? this.attrs[id] | attr : this.attrs[id] & ~attr;
    };
    if (
      ['jina-v2-de', 'jina-v2-es', 'jina-v2-code'].some((s) => pre.includes(s)) ||
      ['nomic-bert-moe', 'jina-bert-v3'].some((s) => arch.includes(s))
    ) {
      set('<mask>', TokenAttr.Lstrip, true);
    } else if (name.includes('phi-3') || name.includes('phi3')) {
      for (const id of this.specialTokens) this.attrs[id] |= TokenAttr.Rstrip;
      set('</s>', TokenAttr.Rstrip, true);
      for (const t of ['<unk>', '<s>', '<|endoftext|>']) set(t, TokenAttr.Rstrip, false);
    } else if (name.includes('modern-bert')) {
      set('[MASK]', TokenAttr.Lstrip, true);
    }
  }

  private shortArray(key: string, got: number, want: number): LlmError {
    return new LlmError(
      'tokenizer',
      `creating the tokenizer: '${key}' has ${got} entries for ${want} tokens; re-convert the model`,
      {
        details: { key, got, want },
      },
    );
  }

  private missingSpecial(flag: string, idKey: string): LlmError {
    return new LlmError(
      'tokenizer',
      `creating the tokenizer: tokenizer.ggml.${flag} is true but tokenizer.ggml.${idKey} is not set`,
      {
        details: { flag, idKey },
      },
    );
  }

  /** Number of tokens. */
  get size(): number {
    return this.tokens.length;
  }

  /** Id of `text` (the first id with that text), or undefined. */
  id(text: string): number | undefined {
    return this.index.get(text);
  }

  /** Builds the text → id map in idle slices (see `FirstIdIndex.buildWhenIdle`); it is built on first use anyway. */
  buildIndexWhenIdle(): void {
    this.index.buildWhenIdle();
  }

  /** Throws `LlmError('tokenizer')` unless `id` is a token id of this vocabulary. */
  checkId(id: number, step: string): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.tokens.length) {
      throw new LlmError(
        'tokenizer',
        `${step}: token id ${id} is out of range (vocabulary has ${this.tokens.length} tokens)`,
        {
          details: { id, vocabSize: this.tokens.length },
        },
      );
    }
  }
}
