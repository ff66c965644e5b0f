/**
 * Context shift on a KV cache held in host-visible bytes (llama.cpp `llama_memory_seq_rm` + `llama_memory_seq_add`
 * with its K-shift graph): positions [nKeep, nKeep + nDiscard) are dropped, positions [nKeep + nDiscard, nPositions)
 * move down by nDiscard, and the moved keys are rotated in place by −nDiscard positions with their layer's RoPE
 * (RoPE by a then by b is RoPE by a + b, so each key ends as if computed at its new position). As llama.cpp, a
 * quantized K is dequantized (and rotated back from its Hadamard basis), rotated, and stored again. Values move as
 * they are. Every backend runs this one routine (WebGPU through `readKv` / `writeKv`).
 */

import { LlmError } from '../errors.js';
import { ropeRows } from './cpu/rope.js';
import { kvLayerCols, type KvLayerBytes } from './kv-rows.js';
import { decodeKvRow, encodeKvRow, hadamardRows, type KvType, kvRotations, kvRowBytes } from './kv-type.js';
import type { KvCacheSpec, KvRows, RopeParams } from './ops.js';

/** What a context shift does to one slot. */
export interface KvShift {
  /** Positions kept at the start (llama.cpp `n_keep`). */
  readonly nKeep: number;
  /** Positions dropped after them (llama.cpp `n_discard`). */
  readonly nDiscard: number;
  /** Positions filled before the shift. */
  readonly nPositions: number;
  /** Each layer's RoPE (null for a NoPE layer: its keys only move). */
  readonly ropes: readonly (RopeParams | null)[];
}

/** Applies `shift` to the rows of every layer given by `layer` (a cache of `spec` stored as `type`). */
export function shiftKvBytes(spec: KvCacheSpec, type: KvType, layer: KvLayerBytes, shift: KvShift): void {
  const { nKeep, nDiscard, nPositions } = shift;
  const moved = nPositions - nKeep - nDiscard;
  for (let l = 0; l < spec.layers.length; l++) {
    const cols = kvLayerCols(spec, l);
    if (cols === 0 || moved <= 0) continue;
    const rb = kvRowBytes(type, cols);
    const { k, v } = layer(l);
    k.copyWithin(nKeep * rb, (nKeep + nDiscard) * rb, nPositions * rb);
    v.copyWithin(nKeep * rb, (nKeep + nDiscard) * rb, nPositions * rb);
    const rope = shift.ropes[l];
    if (!rope) continue;
    const rot = kvRotations(type, spec.layers[l].headDim).k;
    const row = new Float32Array(cols); // [nKvHeads·headDim]
    for (let p = nKeep; p < nKeep + moved; p++) {
      const bytes = k.subarray(p * rb, (p + 1) * rb);
      decodeKvRow(type, bytes, row);
      hadamardRows(row, rot); // H·H = I: back to the RoPE basis
      ropeRows(row, cols, 1, -nDiscard, rope);
      hadamardRows(row, rot);
      encodeKvRow(type, row, bytes);
    }
  }
}

/** Throws `LlmError('invalid-request')` unless `shift` fits a cache of `spec` and `slot` exists. */
export function checkKvShift(spec: KvCacheSpec, slot: number, shift: KvShift): void {
  const { nKeep, nDiscard, nPositions } = shift;
  const ints = [slot, nKeep, nDiscard, nPositions].every((x) => Number.isSafeInteger(x) && x >= 0);
  if (
    !ints ||
    slot >= spec.nSlots ||
    nDiscard < 1 ||
    nKeep + nDiscard > nPositions ||
    nPositions > spec.contextLength ||
    shift.ropes.length !== spec.layers.length
  ) {
    throw new LlmError(
      'invalid-request',
      `shifting KV of slot ${slot}: keep ${nKeep}, discard ${nDiscard} of ${nPositions} positions does not fit the ` +
        `cache (${spec.nSlots} slots, context ${spec.contextLength}, ${spec.layers.length} layers; ${shift.ropes.length} ropes)`,
      { details: { slot, nKeep, nDiscard, nPositions } },
    );
  }
}

/** `KvRows` data (layout of `readKv`) as per-layer byte views, for `shiftKvBytes` on a copy read from a device. */
export function kvRowsLayers(spec: KvCacheSpec, rows: KvRows): KvLayerBytes {
  const starts: number[] = [];
  let at = 0;
  for (let l = 0; l < spec.layers.length; l++) {
    starts.push(at);
    at += 2 * rows.nPositions * kvRowBytes(rows.elementType, kvLayerCols(spec, l));
  }
  return (l) => {
    const len = rows.nPositions * kvRowBytes(rows.elementType, kvLayerCols(spec, l));
    return {
      k: rows.data.subarray(starts[l], starts[l] + len),
      v: rows.data.subarray(starts[l] + len, starts[l] + 2 * len),
    };
  };
}
