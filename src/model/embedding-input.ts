/**
 * Embedding rows as a forward pass's input (`Transformer.evalEmbeddings`): an image's encoder output placed in the
 * sequence where its tokens would be, as llama.cpp's mtmd decodes an image chunk (`llama_batch.embd`).
 */

import { LlmError } from '../errors.js';
import type { ModelConfig } from './config.js';
import type { ImageGrid } from './rope-streams.js';

/** The rows a running `evalEmbeddings` feeds its steps. */
export interface EmbeddingInput {
  /** [nRows, nEmbd] f32. */
  readonly rows: Float32Array;
  /** false: the rows see each other whole (one step). */
  readonly causal: boolean;
  /** Row of `rows` the current step starts at. */
  offset: number;
  /** The image's token grid (multi-stream rope models place its rows at grid positions). */
  readonly grid?: ImageGrid;
  /** Deepstack blocks ([nRows, nEmbd] f32 each, qwen3vl): block j is added to the residual after layer j. */
  readonly deepstack?: readonly Float32Array[];
}

/**
 * The rows of a model with deepstack layers (`config.deepstackLayers` = k): [n, nEmbd·(1 + k)] split into the input
 * rows [n, nEmbd] and k blocks [n, nEmbd] (llama.cpp's `t_inp_embd` views).
 */
export function splitDeepstack(
  rows: Float32Array,
  nEmbd: number,
  k: number,
): { main: Float32Array; blocks: Float32Array[] } {
  if (k === 0) return { main: rows, blocks: [] };
  const width = nEmbd * (1 + k);
  const n = rows.length / width;
  const parts = Array.from({ length: 1 + k }, () => new Float32Array(n * nEmbd)); // (1 + k) × [n, nEmbd]
  for (let r = 0; r < n; r++) {
    for (let j = 0; j <= k; j++)
      parts[j]!.set(rows.subarray(r * width + j * nEmbd, r * width + (j + 1) * nEmbd), r * nEmbd);
  }
  return { main: parts[0]!, blocks: parts.slice(1) };
}

/**
 * The number of rows in `rows` ([n, nEmbd] f32); throws `invalid-request` when it is not a whole, non-empty, finite
 * set of rows or when a non-causal chunk exceeds `maxNonCausal` rows (0 = causal). A model mixing a per-layer token
 * input into every layer (gemma4, gemma3n) takes the rows as llama.cpp does: the step's placeholder ids are 0, so
 * each row's per-layer token part is the padding token's (id 0) row, as `build_inp_per_layer` uses for embeddings.
 */
export function checkEmbeddingRows(rows: Float32Array, config: ModelConfig, maxNonCausal: number): number {
  const nEmbd = config.embeddingLength * (1 + (config.deepstackLayers ?? 0)); // deepstack rows are wider
  const n = rows.length / nEmbd;
  if (!(rows.length > 0 && Number.isInteger(n))) {
    throw new LlmError(
      'invalid-request',
      `evaluating embeddings: ${rows.length} values are not whole rows of the model's ${nEmbd} (n_embd${config.deepstackLayers ? ' × (1 + deepstack layers)' : ''})`,
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

/** Checks an image grid against its rows: nx · ny = n, both whole and positive (`invalid-request` otherwise). */
export function checkImageGrid(grid: ImageGrid, n: number): void {
  if (
    !(
      Number.isSafeInteger(grid.nx) &&
      Number.isSafeInteger(grid.ny) &&
      grid.nx > 0 &&
      grid.ny > 0 &&
      grid.nx * grid.ny === n
    )
  ) {
    throw new LlmError(
      'invalid-request',
      `evaluating embeddings: an image grid of ${grid.nx} × ${grid.ny} tokens does not hold its ${n} rows`,
      { details: { nx: grid.nx, ny: grid.ny, rows: n } },
    );
  }
}
