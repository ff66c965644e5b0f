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

/** Kimi K2's marker regex: llama.cpp runs its Kimi scanner (kimi-k2-scanner.ts) for exactly this text. */
export const RE_KIMI_K2 = '\\p{Han}+';
/** AFMoE's marker regex: llama.cpp runs its digit-grouping scanner (digit-group-scanner.ts) for exactly this text. */
export const RE_AFMOE_DIGITS = '\\p{AFMoE_digits}';
/** tiny_aya's digit regex, for which llama.cpp runs the same digit-grouping scanner instead of the regex. */
export const RE_TINY_AYA_DIGITS = '\\d{1,3}(?=(?:\\d{3})*\\b)';

const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
/** Qwen 2's split without the English contractions (ufakzeka: Turkish apostrophe suffixes stay with their word). */
const RE_QWEN2_NO_CONTRACTIONS =
  '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
const RE_QWEN2 = `${CONTRACTIONS}|${RE_QWEN2_NO_CONTRACTIONS}`;
const RE_QWEN35 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const RE_CJK = '[一-龥ࠀ-一가-퟿]+';
/** Han (U+4E00–U+9FA5), hiragana and katakana runs (DeepSeek V3 and Spark 2.5). */
const RE_HAN_KANA = '[一-龥぀-ゟ゠-ヿ]+';
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

interface Row {
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

/** GPT-4o's original letter words (upper-case run then lower-case run, or the reverse) with a contraction. */
const RE_CASED_WORDS = `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}?`;
const RE_CASED_TAIL = '| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

/** MiniCPM 5: digits in threes first, then Qwen 2's split with whole digit runs. */
const RE_MINICPM5 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;

/** EXAONE MoE: letters joined by single spaces make one pre-token ("superwords"); one newline per pre-token. */
const RE_EXAONE_MOE = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+`;

/** Jais 2: Llama 3's split with whitespace runs cut into powers of two (512 down to 4, then 1–2, then 1). */
const RE_JAIS2 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|${[
  512, 256, 128, 64, 32, 16, 8, 4,
]
  .map((n) => `\\s{${n}}(?!\\S)`)
  .join('|')}|\\s{1,2}(?!\\S)|\\s{1}`;

/** Youtu: Korean, CJK punctuation, bopomofo and Han/kana runs first (the literal classes as llama.cpp has them). */
const RE_YOUTU_CJK =
  '[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+';

/**
 * AFMoE's CJK and South-East Asian runs. The third range starts at U+8C48 (豈 as a unified ideograph), not U+F900
 * (its compatibility twin) as intended: llama.cpp's class is kept as it is, so it also covers Hangul and private use.
 */
const RE_AFMOE_ASIAN =
  '[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+';

/** DeepSeek V3's letters-and-punctuation split; `newlines` is what follows a punctuation run and the newline branch. */
function deepseekStyle(afterPunct: string, newlines: string): string {
  return `[!"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_\`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+${afterPunct}|${newlines}|\\s+(?!\\S)|\\s+`;
}

const ROWS: Row[] = [
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
  { names: ['minicpm5'], regexes: ['\\p{N}{1,3}', RE_MINICPM5], ignoreMerges: true },
  { names: ['jais-2'], regexes: [RE_JAIS2] },
  { names: ['exaone-moe'], regexes: [RE_EXAONE_MOE] },
  { names: ['ufakzeka'], regexes: [RE_QWEN2_NO_CONTRACTIONS], clean: false },
  { names: ['laguna'], regexes: ['[^\\n]+|[\\n]+', RE_QWEN2], clean: false },
  {
    names: ['spark2_5'],
    regexes: ['\\p{N}{1,3}', RE_HAN_KANA, deepseekStyle('', '[\\r\\n]'), '\\p{N}'],
    clean: false,
  },
  {
    names: ['afmoe'],
    regexes: [RE_AFMOE_DIGITS, RE_AFMOE_ASIAN, deepseekStyle('[\\r\\n]*', '\\s*[\\r\\n]+')],
    clean: false,
  },
  {
    names: ['youtu'],
    regexes: [RE_YOUTU_CJK, `${RE_CASED_WORDS}|\\p{N}${RE_CASED_TAIL}`],
    clean: false,
    ignoreMerges: true,
  },
  {
    names: ['tiny_aya', 'cohere2moe'],
    regexes: [RE_TINY_AYA_DIGITS, `${RE_CASED_WORDS}|\\p{N}{1,3}${RE_CASED_TAIL}`],
    clean: false,
  },
  // Whole runs of non-digits stay one pre-token, so merges may span words; digit runs are cut in threes from the end.
  { names: ['superbpe'], regexes: ['\\p{N}+', '(?=(\\d{3})+(?!\\d))'], clean: false },
  // Kimi K2 vocabularies may come without merges (tiktoken ranks): llama.cpp loads them and merges nothing.
  { names: ['kimi-k2'], regexes: [RE_KIMI_K2], clean: false, mergesOptional: true },
  {
    names: ['seed-coder'],
    regexes: [
      `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    ],
    clean: false,
  },
];

const BY_NAME: ReadonlyMap<string, PreTokenizerSpec> = (() => {
  const map = new Map<string, PreTokenizerSpec>();
  for (const row of ROWS) {
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
    for (const name of row.names) map.set(name, spec);
  }
  return map;
})();

/** Every supported `tokenizer.ggml.pre` value. */
export const PRE_TOKENIZER_NAMES: readonly string[] = [...BY_NAME.keys()];

/**
 * The pre-tokenizer for a `tokenizer.ggml.pre` value ('' or absent means llama.cpp's 'default'). An unknown value is
 * `LlmError('tokenizer')`, as in llama.cpp, because guessing would silently change every token.
 */
export function getPreTokenizer(pre: string): PreTokenizerSpec {
  const spec = BY_NAME.get(pre === '' ? 'default' : pre);
  if (!spec) {
    throw new LlmError(
      'tokenizer',
      `creating the BPE tokenizer: unknown pre-tokenizer 'tokenizer.ggml.pre' = '${pre}'; supported: ${PRE_TOKENIZER_NAMES.join(', ')}`,
      { details: { pre } },
    );
  }
  return spec;
}
