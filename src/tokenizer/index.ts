/**
 * Tokenizer factory: builds the `Tokenizer` for a GGUF vocabulary from plain metadata (`tokenizer.ggml.*`), choosing
 * the algorithm by `tokenizer.ggml.model` — `llama` (SPM), `gpt2` (byte-level BPE), `gemma4` (SPM-style BPE on raw
 * UTF-8), `whitespace` and `hybriddna` (BPE variants), `bert` (WordPiece), `t5` (SentencePiece unigram with its
 * precompiled normaliser), `rwkv` (greedy byte trie), `plamo2` (DP over token suffixes with byte fallback), `test`
 * (llama.cpp's hashing test vocabulary). `none` and unknown types are refused with `LlmError('tokenizer')`.
 */

import type { GgufValue } from '../gguf/types.js';
import { isLazyVocabType, loadFragmentEncoders } from './fragment-encoder-registry.js';
import { readStringArray } from './metadata-reader.js';
import { isLazyPreTokenizer } from './pre-tokenizers.js';
import { VocabTokenizer } from './vocab-tokenizer.js';
import { Vocab } from './vocab.js';

export type { Tokenizer } from './tokenizer.js';
export { VocabTokenizer } from './vocab-tokenizer.js';
export { PRE_TOKENIZER_NAMES } from './pre-tokenizers.js';

/**
 * Creates the tokenizer described by GGUF metadata. Throws `LlmError('tokenizer')` for a missing or malformed
 * vocabulary, an unsupported vocabulary type or an unknown BPE pre-tokenizer, and for a WordPiece, unigram, RWKV or
 * PLaMo-2 vocabulary, or one of the rarer BPE pre-tokenizers, before `loadFragmentEncoders()` has run (`loadTokenizer`
 * awaits it).
 *
 * @example
 * const { metadata } = await parseGguf(source);
 * const tok = createTokenizer(metadata);
 * tok.encode('Hello world', { addSpecial: true }); // [1, 15043, 3186] for a Llama 2 vocabulary
 */
export function createTokenizer(metadata: Readonly<Record<string, GgufValue>>): VocabTokenizer {
  return tokenizerOf(new Vocab(metadata), metadata);
}

/**
 * `createTokenizer` after importing what the vocabulary needs: the WordPiece, unigram, RWKV and PLaMo-2 encoders and
 * the rarer BPE pre-tokenizers are a separate chunk (fragment-encoders.ts) that common SPM and BPE vocabularies never
 * fetch. Also throws
 * `LlmError('network')` when that chunk cannot be fetched.
 */
export async function loadTokenizer(metadata: Readonly<Record<string, GgufValue>>): Promise<VocabTokenizer> {
  if (isLazyPreTokenizer(metadata['tokenizer.ggml.pre'])) await loadFragmentEncoders();
  const vocab = new Vocab(metadata);
  if (isLazyVocabType(vocab.type)) await loadFragmentEncoders();
  return tokenizerOf(vocab, metadata);
}

function tokenizerOf(vocab: Vocab, metadata: Readonly<Record<string, GgufValue>>): VocabTokenizer {
  const merges = vocab.type === 'bpe' ? readStringArray(metadata, 'tokenizer.ggml.merges') : undefined;
  // The text → id and merge-rank maps are built on first use, or by `buildIndexesWhenIdle` (createEngine: once ready).
  return new VocabTokenizer(vocab, merges);
}
