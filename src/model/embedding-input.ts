/**
 * Embedding rows as a forward pass's input (`Transformer.evalEmbeddings`): an image's encoder output placed in the
 * sequence where its tokens would be, as llama.cpp's mtmd decodes an image chunk (`llama_batch.embd`).
 */

import { LlmError } from '../errors.js';
import type { ModelConfig } from './config.js';

/** The rows a running `evalEmbeddings` feeds its steps. */
export interface EmbeddingInput {
  /** [nRows, nEmbd] f32. */
  readonly rows: Float32Array;
  /** false: the rows see each other whole (one step). */
  readonly causal: boolean;
  /** Row of `rows` the current step starts at. */
  offset: number;
}

/**
 * The number of rows in `rows` ([n, nEmbd] f32); throws `invalid-request` when it is not a whole, non-empty, finite
 * set of rows or when a non-causal chunk exceeds `maxNonCausal` rows (0 = causal). A model mixing a per-layer token
 * input into every layer (gemma4, gemma3n) takes the rows as llama.cpp does: the step's placeholder ids are 0, so
 * each row's per-layer token part is the padding token's (id 0) row, as `build_inp_per_layer` uses for embeddings.
 */
export function checkEmbeddingRows(rows: Float32Array, config: ModelConfig, maxNonCausal: number): number {
  const nEmbd = config.embeddingLength;
  const n = rows.length / nEmbd;
  if (!(rows.length > 0 && Number.isInteger(n))) {
    throw new LlmError(
      'invalid-request',
      `evaluating embeddings: ${rows.length} values are not whole rows of the model's ${nEmbd} (n_embd)`,
      { details: { values: rows.length, nEmbd } },
    );
  }
  if (maxNonCausal > 0 && n > maxNonCausal) {
    throw new LlmError(
      'invalid-request',
      `evaluating embeddings: ${n} rows attend to each other whole and must fit one step of ${maxNonCausal}; ` +
        'load the model with a larger ubatchSize',
      { details: { rows: n, ubatchSize: maxNonCausal } },
    );
  }
  for (let i = 0; i < rows.length; i++) {
    if (!Number.isFinite(rows[i])) {
      throw new LlmError('invalid-request', `evaluating embeddings: value ${i} is not finite (${rows[i]})`, {
        details: { index: i },
      });
    }
  }
  return n;
}
