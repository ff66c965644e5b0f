/**
 * Hidden states of many sequences for the embedding and rerank paths: packed into as few forward passes as the model
 * allows (`Transformer.hiddenStatesPacked`, consecutive sequences while their total fits `ubatchSize`), or one pass per
 * sequence on a model without packing (the decoders). Either way each sequence sees only itself, so the results are
 * the one-at-a-time ones (within rounding).
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { Transformer } from './model.js';

/**
 * Groups of consecutive indices of `lengths` whose total is at most `capacity`; a sequence longer than `capacity`
 * is a group of its own (the model then refuses it with its own error).
 */
export function packSequences(lengths: readonly number[], capacity: number): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let total = 0;
  lengths.forEach((len, i) => {
    if (group.length > 0 && total + len > capacity) {
      groups.push(group);
      group = [];
      total = 0;
    }
    group.push(i);
    total += len;
  });
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Runs every sequence of `sequences` on `model` in `slot` (its KV is overwritten) and calls `each(index, hidden)` in
 * index order with that sequence's hidden states ([length, embeddingLength], a view valid during the call). With
 * `pooled` on a model that has `pooledStates`, `hidden` is only the row that pooling keeps ([1, embeddingLength]).
 */
export async function forEachHiddenStates(
  model: Transformer,
  sequences: readonly (readonly number[])[],
  slot: number,
  signal: AbortSignal | undefined,
  each: (index: number, hidden: Float32Array) => void,
  pooled?: 'cls' | 'last',
): Promise<void> {
  if (!model.hiddenStates) {
    throw new LlmError('invalid-request', `embeddings: this model (${model.config.arch}) gives no hidden states`);
  }
  const E = model.config.embeddingLength;
  const packed = model.hiddenStatesPacked?.bind(model);
  const groups = packed
    ? packSequences(
        sequences.map((s) => s.length),
        model.ubatchSize,
      )
    : sequences.map((_, i) => [i]);
  for (const group of groups) {
    throwIfAborted(signal, 'computing embeddings');
    const ids = group.map((i) => Int32Array.from(sequences[i]!));
    const rows = pooled && model.pooledStates ? pooled : undefined;
    const hidden = rows
      ? await model.pooledStates!(ids, slot, rows, { signal }) // [group.length, nEmbd]
      : packed && ids.length > 1
        ? await packed(ids, slot, { signal }) // [Σ n, nEmbd]
        : await model.hiddenStates(ids[0]!, slot, { signal }); // [n, nEmbd]
    let row = 0;
    group.forEach((index, j) => {
      const n = rows ? 1 : ids[j]!.length;
      each(index, hidden.subarray(row * E, (row + n) * E));
      row += n;
    });
  }
}
