/**
 * A step's embedding-row input on the backend (`Transformer.evalEmbeddings`): the input rows and, for qwen3vl, the
 * step's rows of every deepstack block written once when the step begins, then added to the residual after their
 * layers from that one activation — no host write mid-step (on WebGPU each such write ended the submission).
 */

import type { Activation, Ops } from '../backend/ops.js';
import type { EmbeddingInput } from './embedding-input.js';

/**
 * Sets a step's n input rows into `x` ([n, nEmbd]) and, for a model with deepstack layers, the step's rows of every
 * deepstack block into `deepstack` ([k·n, nEmbd], block-major), both before the step records any work — so the
 * blocks reach the layers by `addDeepstack` without a write (and a submission) per layer.
 */
export function setInputRows(
  ops: Ops,
  x: Activation,
  deepstack: Activation | null,
  input: EmbeddingInput,
  nEmbd: number,
  n: number,
): void {
  ops.setRows(x, input.rows.subarray(input.offset * nEmbd), n);
  const blocks = input.deepstack ?? [];
  if (!deepstack || blocks.length === 0) return;
  const staged = new Float32Array(blocks.length * n * nEmbd); // [k, n, nEmbd]: block j's rows offset … offset+n−1
  blocks.forEach((b, j) => staged.set(b.subarray(input.offset * nEmbd, (input.offset + n) * nEmbd), j * n * nEmbd));
  ops.setRows(deepstack, staged, blocks.length * n);
}

/**
 * x [n, nEmbd] += deepstack block j of the step's rows (set by `setInputRows`): block 0 is where `add` reads; block
 * j > 0 is first copied there over block 0 (used by then), rows j·n … j·n+n−1 → 0 … n−1, which never overlap.
 */
export function addDeepstack(ops: Ops, x: Activation, deepstack: Activation, j: number, n: number): void {
  if (j > 0) ops.copyRows(deepstack, deepstack, j * n, n);
  ops.add(x, x, deepstack, n);
}
