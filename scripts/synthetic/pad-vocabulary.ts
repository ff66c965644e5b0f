/**
 * Vocabulary padding of the synthetic models: a model whose shape asks for more tokens than its tokenizer file holds
 * gets unused tokens appended (as llama.cpp's converters pad `n_vocab`), so the output matrix and the vocabulary agree.
 */

import type { GgufValue } from '../../src/gguf/types.js';

/** Pads the vocabulary with unused tokens (type 5, score −1e9) up to nVocab (never trims it). */
export function padVocabulary(metadata: Record<string, GgufValue>, nVocab: number): void {
  const tokens = metadata['tokenizer.ggml.tokens'];
  if (!Array.isArray(tokens) || nVocab <= tokens.length) return;
  const n0 = tokens.length;
  const pad = nVocab - n0;
  metadata['tokenizer.ggml.tokens'] = [
    ...(tokens as string[]),
    ...Array.from({ length: pad }, (_, i) => `[webgguf-unused-${n0 + i}]`),
  ];
  const types = metadata['tokenizer.ggml.token_type'];
  if (Array.isArray(types) || ArrayBuffer.isView(types))
    metadata['tokenizer.ggml.token_type'] = [
      ...Array.from(types as ArrayLike<number>),
      ...new Array<number>(pad).fill(5),
    ];
  const scores = metadata['tokenizer.ggml.scores'];
  if (Array.isArray(scores) || ArrayBuffer.isView(scores))
    metadata['tokenizer.ggml.scores'] = [
      ...Array.from(scores as ArrayLike<number>),
      ...new Array<number>(pad).fill(-1e9),
    ];
}
