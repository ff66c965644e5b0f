/**
 * The texts every synthetic vocabulary of synthetic-vocabs.ts is checked on: edge behaviour, fixed sentences in
 * several scripts and seeded random strings, each with add_special and parse_special off and on.
 */

import { mulberry32 } from '../../helpers/mulberry32.js';

/** Seed of every synthetic vocabulary and random case. */
export const SYNTHETIC_SEED = 0x7e18;

/** One tokenizer call to compare. */
export interface TokCase {
  readonly text: string;
  readonly addSpecial: boolean;
  readonly parseSpecial: boolean;
}

/** Words and pieces the vocabularies are built from, so that the texts exercise merges and multi-byte pieces. */
export const WORDS = [
  'the',
  'quick',
  'brown',
  'fox',
  'jumps',
  'over',
  'lazy',
  'dog',
  'hello',
  'world',
  'token',
  'izer',
  'tok',
  'en',
  'un',
  'known',
  'fine',
  'café',
  'naïve',
  're',
  'ing',
  'ed',
  'er',
  'is',
  'it',
  'in',
  'on',
  'an',
  'at',
  'and',
];
export const PIECES = [
  '東京',
  '東',
  '京',
  'タワー',
  'タ',
  'ワ',
  'ー',
  'Привет',
  'при',
  'вет',
  '😀',
  '..',
  '...',
  '!!',
  '12',
  '123',
  '99',
];

/** Texts every vocabulary is checked on (edge behaviour first, then fixed sentences, then seeded random strings). */
export function baseTexts(extra: readonly string[]): string[] {
  const texts = [
    '',
    ' ',
    '  ',
    '   ',
    '\t',
    '\n',
    '\n\n',
    '\n\n\n',
    ' \n ',
    'a',
    ' a',
    'a ',
    '  a  b  ',
    'Hello world',
    ' Hello  world ',
    'hello\tworld\nagain',
    'the quick brown fox jumps over the lazy dog',
    'The Quick Brown Fox!',
    'tokenizer tokenized',
    'naïve café',
    'nai\u0308ve cafe\u0301',
    'ﬁne ﬀ ﬂ',
    'Ａｂｃ １２３',
    'a\u200bb\u200b',
    '\u3000x\u3000 y',
    'wait…',
    '™ and ①',
    '\u00a0nbsp\u00a0',
    '東京タワー',
    'Привет мир',
    '😀😀 😀',
    '\u{10348}\u{1F9EA}',
    '\uFEFFbom',
    'x\uFEFFy',
    '123 4567 89',
    '~tilde~',
    'a\\b',
    'line1\r\nline2',
    '\u0000nul',
    'ÿ\u00ff\u0100',
    'ok' + ' '.repeat(9) + 'ok',
    ...extra,
  ];
  const rnd = mulberry32(SYNTHETIC_SEED + texts.length);
  const alphabet = [
    ...'abcdefghijklmnopqrstuvwxyz   .,!?\n\t',
    'the ',
    'hello',
    '東',
    '京',
    'é',
    'ﬁ',
    '😀',
    'Ａ',
    '\u200b',
    '\u3000',
  ];
  for (let i = 0; i < 16; i++) {
    let s = '';
    const n = 1 + Math.floor(rnd() * 24);
    for (let k = 0; k < n; k++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    texts.push(s);
  }
  return texts;
}

/** Each text with add_special and parse_special off and on. */
export function casesOf(texts: readonly string[]): TokCase[] {
  const out: TokCase[] = [];
  for (const text of texts) {
    for (const [addSpecial, parseSpecial] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      out.push({ text, addSpecial, parseSpecial });
    }
  }
  return out;
}
