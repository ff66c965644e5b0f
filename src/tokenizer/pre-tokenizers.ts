/**
 * BPE pre-tokenizers by `tokenizer.ggml.pre`: the split regexes llama.cpp applies (in order) before merging, and the
 * vocabulary flags each one implies. One table, keyed by data (llama.cpp src/llama-vocab.cpp, `llm_tokenizer_bpe` and
 * `llama_vocab::impl::load`). The regexes are llama.cpp's adapted forms, verbatim, because the splitter recognises
 * some of them by their exact text and runs hand-written scanners for them, as llama.cpp does.
 */

import { LlmError } from '../errors.js';

/** GPT-2's split regex (has a dedicated scanner). */
export const RE_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
/** Llama 3's split regex with the case-insensitive contractions spelled out (has a dedicated scanner). */
export const RE_LLAMA3 =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Llama 3's regex in its original `(?i:…)` spelling (same scanner). */
export const RE_LLAMA3_ORIGINAL =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** English contractions, case spelled out (llama.cpp's adaptation of `(?i:'s|'t|'re|'ve|'m|'ll|'d)`). */
export const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
/** Qwen 2's split without the English contractions (ufakzeka: Turkish apostrophe suffixes stay with their word). */
export const RE_QWEN2_NO_CONTRACTIONS =
  '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
/** Qwen 2's split. */
export const RE_QWEN2 = `${CONTRACTIONS}|${RE_QWEN2_NO_CONTRACTIONS}`;
const RE_QWEN35 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const RE_CJK = '[一-龥ࠀ-一가-퟿]+';
/** Han (U+4E00–U+9FA5), hiragana and katakana runs (DeepSeek V3 and Spark 2.5). */
export const RE_HAN_KANA = '[一-龥぀-ゟ゠-ヿ]+';
const RE_PORO = ' ?[^(\\s|.,!?…。，、।۔،)]+';

/** What one `tokenizer.ggml.pre` value means. */
export interface PreTokenizerSpec {
  /** The regexes, applied one after another, each splitting the pieces the previous one produced. */
  readonly regexes: readonly string[];
  /** `clean_spaces`: detokenization removes spaces before `.,?!` and some contractions. */
  readonly cleanSpaces: boolean;
  /** `ignore_merges`: a pre-token that is itself in the vocabulary becomes that one token. */
  readonly ignoreMerges: boolean;
  /** Default of `add_bos` before `tokenizer.ggml.add_bos_token` is read. */
  readonly addBos: boolean;
  /** Default of `add_sep`. */
  readonly addSep: boolean;
  /** The BOS id is cleared (chatglm). */
  readonly noBos: boolean;
  /** Spaces become U+2581 before splitting, and pieces turn U+2581 back into spaces (SPM-style BPE: Gemma 4). */
  readonly escapeWhitespaces: boolean;
  /** Pre-tokens are GPT-2 byte-encoded before merging (false: merges run on raw text, bytes fall back to `<0xXX>`). */
  readonly byteEncode: boolean;
  /** Default of the normaliser's `lowercase` (used by WPM and the `whitespace` model) before the file's key. */
  readonly lowercase: boolean;
  /** Gemma 4's fixes: `add_bos` forced on whatever the file says; a newline-only pre-token that is a token stays whole. */
  readonly gemma4: boolean;
  /** `tokenizer.ggml.merges` may be absent (Kimi K2): the vocabulary then merges nothing. */
  readonly mergesOptional: boolean;
}

/** One table row: the names sharing a pre-tokenizer, its regexes and the flags that differ from the defaults. */
export interface PreTokenizerRow {
  names: string[];
  regexes: string[];
  clean?: boolean;
  ignoreMerges?: boolean;
  addBos?: boolean;
  addSep?: boolean;
  noBos?: boolean;
  spmStyle?: boolean;
  rawBytes?: boolean;
  noLowercase?: boolean;
  gemma4?: boolean;
  mergesOptional?: boolean;
}

const RE_DEEPSEEK_LLM_LETTERS =
  '\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+';

const RE_DEEPSEEK3 =
  '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+';

const RE_TEKKEN =
  '[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

const RE_GPT4O = `[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+${CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*${CONTRACTIONS}?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;

/** GPT-4o's split with combining marks joining their letters (`[\p{L}\p{M}]` lookaheads): granite-embedding-97m-multilingual. */
const RE_GRANITE_EMB_MULTI = RE_GPT4O.replaceAll('(?=[\\p{L}])', '(?=[\\p{L}\\p{M}])');

const ROWS: PreTokenizerRow[] = [
  { names: ['default'], regexes: ['[\\p{P}\\$\\+<=>\\^~\\|]+', RE_GPT2, '\\p{N}+', '[0-9][0-9][0-9]'] },
  {
    names: ['llama3', 'llama-v3', 'llama-bpe', 'falcon3', 'falcon-h1', 'pixtral', 'midm-2.0', 'lfm2', 'jina-v5-nano'],
    regexes: [RE_LLAMA3],
    ignoreMerges: true,
    addBos: true,
  },
  { names: ['dbrx', 'smaug-bpe'], regexes: [RE_LLAMA3] },
  { names: ['glm4', 'chatglm-bpe'], regexes: [RE_LLAMA3], noBos: true },
  {
    names: ['deepseek-llm'],
    regexes: ['[\r\n]', RE_DEEPSEEK_LLM_LETTERS, '\\s?[!-/:-~！-／：-～‘-‟　-。]+', '\\s+$', RE_CJK, '\\p{N}+'],
    clean: false,
  },
  { names: ['deepseek-coder'], regexes: ['[\r\n]', '\\s?\\p{L}+', '\\s?\\p{P}+', RE_CJK, '\\p{N}'], clean: false },
  {
    names: ['deepseek-v3', 'hunyuan-dense', 'joyai-llm', 'hy_v4'],
    regexes: ['\\p{N}{1,3}', RE_HAN_KANA, RE_DEEPSEEK3],
    clean: false,
  },
  {
    names: ['falcon'],
    regexes: ['[\\p{P}\\$\\+<=>\\^~\\|`]+', RE_GPT2, '[0-9][0-9][0-9]'],
  },
  {
    names: ['gpt-2', 'phi-2', 'jina-es', 'jina-de', 'gigachat', 'jina-v2-es', 'jina-v2-de', 'a.x-4.0', 'mellum'],
    regexes: [RE_GPT2],
  },
  { names: ['modern-bert', 'exaone4', 'mpt', 'olmo', 'jais'], regexes: [RE_GPT2] },
  { names: ['jina-v1-en', 'jina-v2-code', 'roberta-bpe'], regexes: [RE_GPT2], addSep: true },
  { names: ['trillion', 'granite-docling'], regexes: [RE_GPT2], clean: false },
  { names: ['starcoder', 'refact', 'codeshell', 'exaone', 'minerva-7b', 'mellum2'], regexes: ['\\p{N}', RE_GPT2] },
  { names: ['command-r', 'smollm'], regexes: ['\\p{N}', RE_GPT2], clean: false },
  {
    names: ['qwen2', 'deepseek-r1-qwen', 'kormo', 'f2llmv2', 'hunyuan', 'solar-open', 'grok-2'],
    regexes: [RE_QWEN2],
    clean: false,
  },
  { names: ['stablelm2', 'megrez'], regexes: [RE_QWEN2] },
  { names: ['qwen35'], regexes: [RE_QWEN35], clean: false },
  { names: ['poro-chat'], regexes: [RE_PORO], clean: false },
  { names: ['bloom', 'gpt3-finnish'], regexes: [RE_PORO] },
  { names: ['viking'], regexes: [RE_PORO, '\\p{N}'], clean: false },
  { names: ['tekken'], regexes: [RE_TEKKEN], clean: false, ignoreMerges: true, addBos: true },
  { names: ['gpt-4o', 'llama4', 'kanana2', 'talkie', 'minimax-m2'], regexes: [RE_GPT4O], clean: false },
  { names: ['granite-embed-multi-97m'], regexes: [RE_GRANITE_EMB_MULTI], clean: false, ignoreMerges: true },
  {
    names: ['chameleon'],
    regexes: [
      '<sentinel:[0-9]+>',
      '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z',
      '([\\t\\n]|    |  )',
      '\\p{N}',
      '[\\p{P}!-/:-@\\[-`{-~]',
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    ],
    clean: false,
    addBos: true,
  },
  {
    names: ['bailingmoe', 'bailingmoe2', 'llada-moe'],
    regexes: [
      "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
    ],
    clean: false,
  },
  // SPM-style BPE: the text is escaped (' ' → U+2581) and only split at newline runs; merges run on raw UTF-8.
  { names: ['gemma4', 'granite-embed-multi-311m'], regexes: ['[^\\n]+|[\\n]+'], spmStyle: true, gemma4: true },
  { names: ['sarvam-moe'], regexes: ['[^\\n]+|[\\n]+'], spmStyle: true, clean: false },
  // jina-embeddings-v2-base-zh: whitespace-separated words, merges on raw UTF-8, no lower-casing unless the file says.
  { names: ['whitespace'], regexes: ['\\S+'], rawBytes: true, noLowercase: true },
  {
    names: ['seed-coder'],
    regexes: [
      `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    ],
    clean: false,
  },
];

const BY_NAME = new Map<string, PreTokenizerSpec>();

/** Adds table rows (the core table below; the rarer names from rare-pre-tokenizers.ts once that chunk loads). */
export function addPreTokenizers(rows: readonly PreTokenizerRow[]): void {
  for (const row of rows) {
    const spec: PreTokenizerSpec = {
      regexes: row.regexes,
      cleanSpaces: row.clean ?? true,
      ignoreMerges: row.ignoreMerges ?? false,
      addBos: row.addBos ?? false,
      addSep: row.addSep ?? false,
      noBos: row.noBos ?? false,
      escapeWhitespaces: row.spmStyle ?? false,
      byteEncode: !(row.spmStyle ?? row.rawBytes ?? false),
      lowercase: !(row.noLowercase ?? false),
      gemma4: row.gemma4 ?? false,
      mergesOptional: row.mergesOptional ?? false,
    };
    for (const name of row.names) BY_NAME.set(name, spec);
  }
}
addPreTokenizers(ROWS);

/**
 * Names whose rows (and the scanners some of them need) live in the lazy tokenizer chunk with the rarer vocabulary
 * types (fragment-encoders.ts), to keep the core bundle small: `loadTokenizer` awaits that chunk for them.
 */
const LAZY_NAMES: readonly string[] = [
  'afmoe',
  'cohere2moe',
  'exaone-moe',
  'jais-2',
  'kimi-k2',
  'laguna',
  'minicpm5',
  'spark2_5',
  'superbpe',
  'tiny_aya',
  'ufakzeka',
  'youtu',
];

/** Whether a `tokenizer.ggml.pre` value's row is in the lazy chunk (await `loadFragmentEncoders` first). */
export function isLazyPreTokenizer(pre: unknown): boolean {
  return typeof pre === 'string' && LAZY_NAMES.includes(pre);
}

/** Every supported `tokenizer.ggml.pre` value. */
export const PRE_TOKENIZER_NAMES: readonly string[] = [...BY_NAME.keys(), ...LAZY_NAMES];

/**
 * The pre-tokenizer for a `tokenizer.ggml.pre` value ('' or absent means llama.cpp's 'default'). An unknown value is
 * `LlmError('tokenizer')`, as in llama.cpp, because guessing would silently change every token.
 */
export function getPreTokenizer(pre: string): PreTokenizerSpec {
  const spec = BY_NAME.get(pre === '' ? 'default' : pre);
  if (!spec && LAZY_NAMES.includes(pre)) {
    throw new LlmError(
      'tokenizer',
      `creating the BPE tokenizer: pre-tokenizer '${pre}' is in the lazy tokenizer chunk, not loaded yet; use loadTokenizer (or await loadFragmentEncoders() before createTokenizer)`,
      { details: { pre } },
    );
  }
  if (!spec) {
    throw new LlmError(
      'tokenizer',
      `creating the BPE tokenizer: unknown pre-tokenizer 'tokenizer.ggml.pre' = '${pre}'; supported: ${PRE_TOKENIZER_NAMES.join(', ')}`,
      { details: { pre } },
    );
  }
  return spec;
}
