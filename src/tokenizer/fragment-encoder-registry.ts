/**
 * Where the tokenizer finds the encoders of the rarer vocabulary types (fragment-encoders.ts, a lazy chunk):
 * `loadFragmentEncoders` imports them once; `createTokenizer` then builds such a vocabulary's tokenizer synchronously.
 * `loadTokenizer` (tokenizer/index.ts) awaits the chunk when the vocabulary needs it.
 */

import { LlmError } from '../errors.js';
import { loadChunk } from '../io/load-chunk.js';
import type { Vocab, VocabType } from './vocab.js';

/** Encodes one raw-text fragment (no special tokens in it), appending ids. */
export interface FragmentEncoder {
  encode(text: string, out: number[]): void;
}

/** The vocabulary types whose encoders live in the lazy chunk. */
export type LazyVocabType = Extract<VocabType, 'wpm' | 'ugm' | 'rwkv' | 'plamo2'>;

const LAZY_TYPES: ReadonlySet<VocabType> = new Set<LazyVocabType>(['wpm', 'ugm', 'rwkv', 'plamo2']);

/** Whether `type`'s encoder is in the lazy chunk (await `loadFragmentEncoders` before `createTokenizer`). */
export function isLazyVocabType(type: VocabType): type is LazyVocabType {
  return LAZY_TYPES.has(type);
}

type Constructors = Readonly<Record<LazyVocabType, (vocab: Vocab) => FragmentEncoder>>;
let constructors: Constructors | null = null;

/** Imports the rarer vocabulary types' encoders and BPE pre-tokenizers (once). @throws LlmError('network') when the chunk cannot load. */
export async function loadFragmentEncoders(): Promise<void> {
  if (constructors) return;
  const chunk = await loadChunk(
    'tokenizer (WordPiece, unigram, RWKV, PLaMo-2, rarer BPE pre-tokenizers)',
    () => import('./fragment-encoders.js'),
  );
  chunk.installRarePreTokenizers();
  constructors = chunk.FRAGMENT_ENCODERS;
}

/** The encoder of a lazily loaded vocabulary type; `LlmError('tokenizer')` when its chunk is not loaded yet. */
export function fragmentEncoderFor(vocab: Vocab, type: LazyVocabType): FragmentEncoder {
  if (constructors === null) {
    throw new LlmError(
      'tokenizer',
      `creating the tokenizer: the '${vocab.model}' vocabulary's encoder is not loaded; use loadTokenizer (or await loadFragmentEncoders() before createTokenizer)`,
    );
  }
  return constructors[type](vocab);
}
