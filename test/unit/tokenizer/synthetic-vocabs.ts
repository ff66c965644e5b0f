/**
 * Synthetic vocabulary GGUFs for the tokenizer types without llama.cpp test vectors — UGM (`t5`, with a real
 * precompiled charsmap), `gemma4`, `rwkv`, `plamo2`, `whitespace`, `hybriddna`, `test` — built from a fixed seed,
 * plus the texts they are checked on.
 * `scripts/make-tokenizer-reference.ts` writes them and records llama.cpp's answers (and each file's sha256) in
 * test/fixtures/tokenizers/; the tests rebuild the same bytes and fail loudly if the generator drifted.
 */

import { writeGguf } from '../../../src/gguf/write.js';
import { ggufType } from '../../../src/gguf/value-types.js';
import type { GgufValue, GgufValueTypeInfo } from '../../../src/gguf/types.js';
import { BYTE_TO_CHAR } from '../../../src/tokenizer/unicode.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { baseTexts, casesOf, PIECES, SYNTHETIC_SEED, type TokCase, WORDS } from './synthetic-texts.js';
import { buildCharsmap } from './charsmap-builder.js';

/** llama.h `llama_token_type`. */
const T = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** A synthetic vocabulary: its GGUF metadata (with stored types) and the texts it is checked on. */
export interface SyntheticVocab {
  readonly name: string;
  readonly metadata: Readonly<Record<string, GgufValue>>;
  readonly metadataTypes: Readonly<Record<string, GgufValueTypeInfo>>;
  readonly cases: readonly TokCase[];
}

interface Tok {
  text: string;
  type: number;
  score: number;
}

const hexByte = (b: number): string => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

/** Metadata shared by every synthetic vocabulary (llama.cpp's vocab-only loader still reads the arch's hparams). */
function header(name: string): Record<string, GgufValue> {
  return {
    'general.architecture': 'llama',
    'general.name': name,
    'llama.block_count': 1,
    'llama.context_length': 256,
    'llama.embedding_length': 64,
    'llama.feed_forward_length': 128,
    'llama.attention.head_count': 4,
    'llama.attention.head_count_kv': 4,
    'llama.attention.layer_norm_rms_epsilon': 1e-5,
    'llama.rope.dimension_count': 16,
  };
}

function finish(
  name: string,
  model: string,
  toks: Tok[],
  extra: Record<string, GgufValue>,
  texts: string[],
): SyntheticVocab {
  const seen = new Set<string>();
  for (const t of toks) {
    if (seen.has(t.text)) throw new Error(`synthetic vocab ${name}: duplicate token ${JSON.stringify(t.text)}`);
    seen.add(t.text);
  }
  const metadata: Record<string, GgufValue> = {
    ...header(name),
    'llama.vocab_size': toks.length,
    'tokenizer.ggml.model': model,
    'tokenizer.ggml.tokens': toks.map((t) => t.text),
    'tokenizer.ggml.scores': toks.map((t) => Math.fround(t.score)),
    'tokenizer.ggml.token_type': toks.map((t) => t.type),
    ...extra,
  };
  const metadataTypes: Record<string, GgufValueTypeInfo> = {
    'tokenizer.ggml.scores': ggufType.array(ggufType.FLOAT32),
    'tokenizer.ggml.token_type': ggufType.array(ggufType.INT32),
    'llama.attention.layer_norm_rms_epsilon': ggufType.FLOAT32,
  };
  for (const k of Object.keys(metadata)) if (k.endsWith('_token_id')) metadataTypes[k] = ggufType.UINT32;
  if ('tokenizer.ggml.precompiled_charsmap' in metadata) {
    metadataTypes['tokenizer.ggml.precompiled_charsmap'] = ggufType.array(ggufType.UINT8);
  }
  return { name, metadata, metadataTypes, cases: casesOf(baseTexts(texts)) };
}

/** Scores: log-probability-like negatives from the seed (distinct, so ties are rare but possible by length). */
function scorer(seed: number): (len: number) => number {
  const rnd = mulberry32(seed);
  return (len) => -(1 + rnd() * 12) / Math.sqrt(len);
}

/** UGM (T5 style): charsmap normaliser, dummy prefix, merged whitespace, user-defined and byte tokens. */
function ugm(name: string, variant: 'a' | 'b'): SyntheticVocab {
  const score = scorer(SYNTHETIC_SEED + (variant === 'a' ? 1 : 2));
  const toks: Tok[] = [
    { text: '<pad>', type: T.CONTROL, score: 0 },
    { text: '</s>', type: T.CONTROL, score: 0 },
    { text: '<unk>', type: T.UNKNOWN, score: 0 },
    { text: '<s>', type: T.CONTROL, score: 0 },
    { text: '<extra_id_0>', type: T.USER_DEFINED, score: 0 },
    { text: '<sep>', type: T.USER_DEFINED, score: 0 },
    { text: '<unused_1>', type: T.UNUSED, score: -3 },
    { text: '▁', type: T.NORMAL, score: -2.5 },
  ];
  for (const b of [0x0a, 0x41, 0xe6, 0x9d, 0xb1]) toks.push({ text: hexByte(b), type: T.BYTE, score: 0 });
  const add = (text: string): void => {
    if (!toks.some((t) => t.text === text)) toks.push({ text, type: T.NORMAL, score: score([...text].length) });
  };
  for (const c of 'abcdefghijklmnopqrstuvwxyzTHQ.,!?12345ḯéфиПрвет東京') add(c);
  for (const w of WORDS) {
    add(`▁${w}`);
    add(w);
    for (let k = 2; k < w.length; k++) add(w.slice(0, k));
  }
  for (const p of PIECES) add(p);
  add('▁▁');
  add('fi');
  add('ff');
  const extra: Record<string, GgufValue> = {
    'tokenizer.ggml.add_space_prefix': variant === 'a',
    'tokenizer.ggml.remove_extra_whitespaces': variant === 'a',
  };
  if (variant === 'a') {
    extra['tokenizer.ggml.precompiled_charsmap'] = [
      ...buildCharsmap([
        ['ﬁ', 'fi'],
        ['ﬀ', 'ff'],
        ['ﬂ', 'fl'],
        ['Ａ', 'A'],
        ['ｂ', 'b'],
        ['ｃ', 'c'],
        ['１', '1'],
        ['２', '2'],
        ['３', '3'],
        ['\u3000', ' '],
        ['\u00a0', ' '],
        ['\t', ' '],
        ['\n', ' '],
        ['\r', ''],
        ['\u200b', ''],
        ['e\u0301', 'é'],
        ['i\u0308', 'ï'],
        ['…', '...'],
        ['™', 'TM'],
        ['①', '1'],
        ['T', 't'],
        ['TH', 'th'],
        ['ÿ', 'y'],
      ]),
    ];
    extra['tokenizer.ggml.eos_token_id'] = 1;
    extra['tokenizer.ggml.unknown_token_id'] = 2;
    extra['tokenizer.ggml.padding_token_id'] = 0;
  } else {
    extra['tokenizer.ggml.bos_token_id'] = 3;
    extra['tokenizer.ggml.add_bos_token'] = true;
    extra['tokenizer.ggml.add_eos_token'] = false;
  }
  return finish(name, 't5', toks, extra, ['<extra_id_0>x<sep>', '<extra_i', 'a<s>b</s>', '<unused_1>', '<unk>']);
}

/** Learns left-to-right merges for words (each prefix becomes a token): a BPE vocabulary whose merges all apply. */
function mergeLearner(add: (text: string) => void): { merges: string[]; learn: (word: string) => void } {
  const merges: string[] = [];
  const seen = new Set<string>();
  const learn = (word: string): void => {
    const cps = [...word];
    let left = cps[0];
    add(left);
    for (let k = 1; k < cps.length; k++) {
      add(cps[k]);
      const m = `${left} ${cps[k]}`;
      if (!seen.has(m)) {
        seen.add(m);
        merges.push(m);
      }
      left += cps[k];
      add(left);
    }
  };
  return { merges, learn };
}

/** Gemma 4: SPM-style BPE over raw UTF-8 with `<0xXX>` fallback, forced BOS, newline tokens. */
function gemma4(): SyntheticVocab {
  const toks: Tok[] = [
    { text: '<pad>', type: T.CONTROL, score: 0 },
    { text: '<eos>', type: T.CONTROL, score: 0 },
    { text: '<bos>', type: T.CONTROL, score: 0 },
    { text: '<unk>', type: T.UNKNOWN, score: 0 },
    { text: '<start_of_turn>', type: T.CONTROL, score: 0 },
    { text: '<end_of_turn>', type: T.CONTROL, score: 0 },
    { text: '<|tool_response>', type: T.CONTROL, score: 0 },
    { text: '</s>', type: T.CONTROL, score: 0 },
    { text: '<mask>', type: T.USER_DEFINED, score: 0 },
  ];
  for (let b = 0; b < 256; b++) toks.push({ text: hexByte(b), type: T.BYTE, score: 0 });
  const have = new Set(toks.map((t) => t.text));
  const add = (text: string): void => {
    if (!have.has(text)) {
      have.add(text);
      toks.push({ text, type: T.NORMAL, score: 0 });
    }
  };
  for (const c of '▁abcdefghijklmnopqrstuvwxyzHTQ.,!?0123456789éï東京\n\t') add(c);
  add('\n\n');
  const { merges, learn } = mergeLearner(add);
  learn('\n\n');
  for (const w of WORDS) learn(`▁${w}`);
  for (const w of WORDS.slice(0, 12)) learn(w);
  for (const p of PIECES.slice(0, 6)) learn(p);
  learn('▁▁');
  return finish(
    'synthetic-gemma4',
    'gemma4',
    toks,
    {
      'tokenizer.ggml.merges': merges,
      'tokenizer.ggml.bos_token_id': 2,
      'tokenizer.ggml.eos_token_id': 1,
      'tokenizer.ggml.unknown_token_id': 3,
      'tokenizer.ggml.padding_token_id': 0,
      'tokenizer.ggml.add_bos_token': false,
      'tokenizer.ggml.add_eos_token': false,
    },
    ['<start_of_turn>user\nhi<end_of_turn>\n', '<bos><eos>', 'a\n\n\nb', '<mask> x', '</s>'],
  );
}

/** RWKV "world": escaped byte strings, greedy longest match; '~' has no token, so it is the unknown token. */
function rwkv(): SyntheticVocab {
  const esc = (bytes: Uint8Array): string => {
    let s = '';
    for (const b of bytes) {
      if (b === 0x5c) s += '\\\\';
      else if (b === 0x0a) s += '\\n';
      else if (b === 0x09) s += '\\t';
      else if (b === 0x0d) s += '\\r';
      else if (b >= 0x20 && b < 0x7f) s += String.fromCharCode(b);
      else s += `\\x${b.toString(16).padStart(2, '0')}`;
    }
    return s;
  };
  const enc = new TextEncoder();
  const toks: Tok[] = [{ text: '<s>', type: T.CONTROL, score: 0 }];
  const have = new Set<string>(['<s>']);
  const add = (text: string): void => {
    if (!have.has(text)) {
      have.add(text);
      toks.push({ text, type: T.NORMAL, score: 0 });
    }
  };
  for (let b = 1; b < 256; b++) if (b !== 0x7e) add(esc(Uint8Array.of(b)));
  for (const w of WORDS) {
    add(esc(enc.encode(w)));
    add(esc(enc.encode(` ${w}`)));
  }
  for (const p of PIECES) add(esc(enc.encode(p)));
  add('\\n\\n');
  add('\\xe6\\x9d'); // half of 東: pieces need not be whole characters
  add('東京'); // raw UTF-8 in the token text works too
  add('<|user|>');
  // Two user-defined tokens of equal UTF-16 length but different UTF-8 length: llama.cpp tries the longer in bytes first.
  toks.push({ text: 'xy', type: T.USER_DEFINED, score: 0 }, { text: 'éx', type: T.USER_DEFINED, score: 0 });
  // As llama.cpp's converter: BOS = EOS = '<s>', and the plain '\n\n' token named as EOT (it stays a normal token).
  const eot = toks.findIndex((t) => t.text === '\\n\\n');
  return finish(
    'synthetic-rwkv',
    'rwkv',
    toks,
    {
      'tokenizer.ggml.bos_token_id': 0,
      'tokenizer.ggml.eos_token_id': 0,
      'tokenizer.ggml.eot_token_id': eot,
      'tokenizer.ggml.unknown_token_id': 0,
    },
    ['<s>x<s>', '<|user|>hi', '~~~', 'a\n\nb', 'éxy', 'xyéx'],
  );
}

/** PLaMo-2: DP over suffixes with scores, `<0xXX>` byte fallback, leading BOM dropped. */
function plamo2(): SyntheticVocab {
  const score = scorer(SYNTHETIC_SEED + 3);
  const toks: Tok[] = [
    { text: '<|plamo:unk|>', type: T.CONTROL, score: 0 },
    { text: '<|plamo:bos|>', type: T.CONTROL, score: 0 },
    { text: '<|plamo:eos|>', type: T.CONTROL, score: 0 },
    { text: '<|plamo:pad|>', type: T.CONTROL, score: 0 },
  ];
  for (let b = 0; b < 256; b++) toks.push({ text: hexByte(b), type: T.BYTE, score: 0 });
  const have = new Set(toks.map((t) => t.text));
  const add = (text: string, type: number = T.NORMAL): void => {
    if (!have.has(text)) {
      have.add(text);
      toks.push({ text, type, score: score([...text].length) });
    }
  };
  for (const c of 'abcdefghijklmnopqrstuvwxyz .,!?\n東京é') add(c);
  for (const w of WORDS) {
    add(w);
    add(` ${w}`);
    add(w.slice(1));
  }
  for (const p of PIECES) add(p);
  add('  ');
  add('<|user|>', T.USER_DEFINED);
  add('[P');
  // The converter pads the vocabulary with UNUSED '[PADn]' tokens scored -1000: exactly llama.cpp's UNKNOWN_SCORE.
  for (let i = 1; i <= 12; i++) toks.push({ text: `[PAD${i}]`, type: T.UNUSED, score: -1000 });
  return finish(
    'synthetic-plamo2',
    'plamo2',
    toks,
    {
      'tokenizer.ggml.pre': 'default',
      'tokenizer.ggml.bos_token_id': 1,
      'tokenizer.ggml.eos_token_id': 2,
      'tokenizer.ggml.add_bos_token': true,
    },
    [
      '<|plamo:bos|>x<|plamo:eos|>',
      '<|user|>hi',
      'xyzzy',
      '[PAD1]',
      'the[PAD1]x',
      'a[PAD12]b[PAD',
      'x[PAD3][PAD4]',
      '[P[PA[PAD',
    ],
  );
}

/** `whitespace` (jina-embeddings-v2-base-zh): whitespace dropped, raw-UTF-8 BPE per run, optional lower-casing. */
function whitespace(name: string, lowercase: boolean): SyntheticVocab {
  const toks: Tok[] = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((text) => ({
    text,
    type: T.CONTROL,
    score: 0,
  }));
  for (const b of [0x41, 0x7e, 0xe2, 0x80, 0x8b, 0xf0, 0x9f, 0x98])
    toks.push({ text: hexByte(b), type: T.BYTE, score: 0 });
  const have = new Set(toks.map((t) => t.text));
  const add = (text: string): void => {
    if (!have.has(text)) {
      have.add(text);
      toks.push({ text, type: T.NORMAL, score: 0 });
    }
  };
  const { merges, learn } = mergeLearner(add);
  for (const c of 'abcdefghijklmnopqrstuvwxyzHTQ.,!?0123456789éï東京Пр') add(c);
  for (const w of WORDS) learn(w);
  for (const p of PIECES.slice(0, 9)) learn(p);
  learn('The');
  const meta: Record<string, GgufValue> = {
    'tokenizer.ggml.pre': 'whitespace',
    'tokenizer.ggml.merges': merges,
    'tokenizer.ggml.bos_token_id': 2,
    'tokenizer.ggml.eos_token_id': 3,
    'tokenizer.ggml.unknown_token_id': 1,
    'tokenizer.ggml.add_bos_token': true,
    'tokenizer.ggml.add_eos_token': true,
  };
  if (lowercase) meta['tokenizer.ggml.normalizer.lowercase'] = true;
  return finish(name, 'whitespace', toks, meta, ['[CLS] Hello [SEP]', 'ÀÉÎ İstanbul ΣΑΣ', 'MiXeD CaSe']);
}

/** `hybriddna`: byte-level BPE outside `<dna>…</dna>`, marker-suffixed 6-mers inside. */
function hybridDna(): SyntheticVocab {
  const toks: Tok[] = [...BYTE_TO_CHAR].map((text) => ({ text, type: T.NORMAL, score: 0 }));
  const have = new Set(toks.map((t) => t.text));
  const add = (text: string): void => {
    if (!have.has(text)) {
      have.add(text);
      toks.push({ text, type: T.NORMAL, score: 0 });
    }
  };
  const { merges, learn } = mergeLearner(add);
  for (const w of WORDS.slice(0, 10)) learn(`Ġ${w}`);
  learn('CCCCCC'); // a base token equal to a k-mer's text
  for (const t of ['<|endoftext|>', '<dna>', '</dna>', '<oov>']) toks.push({ text: t, type: T.CONTROL, score: 0 });
  const rnd = mulberry32(SYNTHETIC_SEED + 4);
  const kmers = new Set(['AAAAAA', 'CCCCCC', 'ACGTAC', 'GTACGT', 'TTTTTT', 'ACGAAA', 'AAAAAA']);
  while (kmers.size < 48) kmers.add(Array.from({ length: 6 }, () => 'ACGT'[Math.floor(rnd() * 4)]).join(''));
  for (const k of kmers) toks.push({ text: `${k}\ue000`, type: T.NORMAL, score: 0 });
  return finish(
    'synthetic-hybriddna',
    'hybriddna',
    toks,
    {
      'tokenizer.ggml.pre': 'gpt-2',
      'tokenizer.ggml.merges': merges,
      'tokenizer.ggml.bos_token_id': 256 + 0,
      'tokenizer.ggml.eos_token_id': toks.findIndex((t) => t.text === '<|endoftext|>'),
    },
    [
      '<dna>ACGTACGTACGT</dna>',
      'the <dna>acgtacgtac</dna> dog',
      '<dna>CCCCCC',
      'x</dna><dna></dna>',
      '<dna>ACGé東ACGTAC</dna>',
      '<dna>NNNNNNAC</dna><dna>TTTTTTTTTTTT</dna>',
      'CCCCCC <dna>CCCCCC</dna>',
    ],
  );
}

/** llama.cpp's `test` type: 5-byte hash chunks, hex detokenization. */
function testVocab(): SyntheticVocab {
  const toks: Tok[] = Array.from({ length: 97 }, (_, i) => ({
    text: `t${i}`,
    type: i === 5 ? T.CONTROL : T.NORMAL,
    score: 0,
  }));
  toks.push({ text: '<user>', type: T.USER_DEFINED, score: 0 });
  return finish('synthetic-test', 'test', toks, {}, ['<user>abc', 't5t5']);
}

/** Every synthetic vocabulary, in a fixed order. */
export function syntheticVocabs(): SyntheticVocab[] {
  return [
    ugm('synthetic-ugm', 'a'),
    ugm('synthetic-ugm-plain', 'b'),
    gemma4(),
    rwkv(),
    plamo2(),
    whitespace('synthetic-whitespace', false),
    whitespace('synthetic-whitespace-lower', true),
    hybridDna(),
    testVocab(),
  ];
}

/** The GGUF bytes of one synthetic vocabulary (no tensors: a vocab-only file). */
export function syntheticVocabGguf(v: SyntheticVocab): Uint8Array {
  return writeGguf({ metadata: v.metadata, metadataTypes: v.metadataTypes });
}
