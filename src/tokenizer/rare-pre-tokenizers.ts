/**
 * The rarer BPE pre-tokenizers (llama.cpp src/llama-vocab.cpp, `llm_tokenizer_bpe` and `llama_vocab::impl::load`):
 * afmoe, cohere2moe, exaone-moe, jais-2, kimi-k2, laguna, minicpm5, spark2_5, superbpe, tiny_aya, ufakzeka, youtu.
 * Table rows like pre-tokenizers.ts's, with the regexes verbatim (two are markers for which llama.cpp runs
 * hand-written scanners, registered here with the splitter). Part of the lazy tokenizer chunk (fragment-encoders.ts):
 * `installRarePreTokenizers` runs when it loads.
 */

import { digitGroupScanner } from './digit-group-scanner.js';
import { kimiK2Scanner } from './kimi-k2-scanner.js';
import {
  CONTRACTIONS,
  type PreTokenizerRow,
  RE_HAN_KANA,
  RE_QWEN2,
  RE_QWEN2_NO_CONTRACTIONS,
  addPreTokenizers,
} from './pre-tokenizers.js';
import { registerSplitScanners } from './regex-split.js';

/** Kimi K2's marker regex: llama.cpp runs its Kimi scanner (kimi-k2-scanner.ts) for exactly this text. */
const RE_KIMI_K2 = '\\p{Han}+';
/** AFMoE's marker regex: llama.cpp runs its digit-grouping scanner (digit-group-scanner.ts) for exactly this text. */
const RE_AFMOE_DIGITS = '\\p{AFMoE_digits}';
/** tiny_aya's digit regex, for which llama.cpp runs the same digit-grouping scanner instead of the regex. */
const RE_TINY_AYA_DIGITS = '\\d{1,3}(?=(?:\\d{3})*\\b)';

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

const ROWS: PreTokenizerRow[] = [
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
];

let installed = false;

/** Adds the rows to the pre-tokenizer table and the Kimi K2 and digit-group scanners to the splitter (once). */
export function installRarePreTokenizers(): void {
  if (installed) return;
  installed = true;
  registerSplitScanners([
    [RE_KIMI_K2, kimiK2Scanner],
    [RE_AFMOE_DIGITS, digitGroupScanner],
    [RE_TINY_AYA_DIGITS, digitGroupScanner],
  ]);
  addPreTokenizers(ROWS);
}
