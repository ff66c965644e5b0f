/**
 * `loadGrammarEngine`: the constrained-decoding engine (grammar-engine.ts) is a chunk of its own, like the XGrammar
 * module it loads, imported by a model's first constrained request.
 */

import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { loadChunk } from '../io/load-chunk.js';
import type { GrammarEngine } from './grammar-engine.js';

/** A `GrammarEngine` for one model, its code fetched first. @throws LlmError('network') when it cannot be. */
export async function loadGrammarEngine(
  tokenizer: Tokenizer,
  vocabSize: number,
  modelKey: string,
): Promise<GrammarEngine> {
  const { GrammarEngine } = await loadChunk('constrained decoding', () => import('./grammar-engine.js'));
  return new GrammarEngine(tokenizer, vocabSize, modelKey);
}
