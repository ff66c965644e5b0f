/** KV geometry helpers and checks shared by every backend (per-layer widths, attention geometry, `readKv` / `writeKv`). */

import { LlmError } from '../errors.js';
import type { AttentionParams, KvCacheSpec, KvRows } from './ops.js';

/** Values in one position's K (or V) row of layer `l`: `nKvHeads · headDim` (0 for a layer without KV). */
export function kvLayerCols(spec: KvCacheSpec, l: number): number {
  const layer = spec.layers[l];
  return layer.nKvHeads * layer.headDim;
}

/** Values in one position's K (or V) rows of every layer together. */
export function kvPositionCols(spec: KvCacheSpec): number {
  let cols = 0;
  for (let l = 0; l < spec.layers.length; l++) cols += kvLayerCols(spec, l);
  return cols;
}

/**
 * Throws `LlmError('invalid-request')` unless attention `params` of `layer` match that layer's KV geometry (same KV
 * heads and head size, query heads a multiple of the KV heads).
 */
export function checkAttentionGeometry(spec: KvCacheSpec, layer: number, params: AttentionParams): void {
  const kv = spec.layers[layer];
  const { nHeads, nKvHeads, headDim } = params;
  if (
    kv === undefined ||
    kv.nKvHeads !== nKvHeads ||
    kv.headDim !== headDim ||
    nKvHeads < 1 ||
    nHeads % nKvHeads !== 0
  ) {
    throw new LlmError(
      'invalid-request',
      `attention of layer ${layer}: ${nHeads} heads / ${nKvHeads} KV heads × ${headDim} do not match the KV cache ` +
        (kv === undefined
          ? `(${spec.layers.length} layers)`
          : `(${kv.nKvHeads} KV heads × ${kv.headDim} on this layer)`),
      { details: { layer, nHeads, nKvHeads, headDim } },
    );
  }
}

/** Bytes of the `KvRows` of `nPositions` positions for `spec` with `elementBytes`-byte values. */
function kvRowsBytes(spec: KvCacheSpec, nPositions: number, elementBytes: number): number {
  return 2 * nPositions * kvPositionCols(spec) * elementBytes;
}

/** Throws `LlmError('invalid-request')` unless `slot` and `nPositions` (and `rows`, when writing) fit `spec`. */
export function checkKvRows(
  op: string,
  spec: KvCacheSpec,
  slot: number,
  nPositions: number,
  elementType: KvRows['elementType'],
  rows?: KvRows,
): void {
  if (
    !(Number.isInteger(slot) && slot >= 0 && slot < spec.nSlots) ||
    !(Number.isInteger(nPositions) && nPositions >= 0 && nPositions <= spec.contextLength)
  ) {
    throw new LlmError(
      'invalid-request',
      `${op}: slot ${slot} / ${nPositions} positions are outside the KV cache (${spec.nSlots} slots, context ${spec.contextLength})`,
    );
  }
  if (rows !== undefined) {
    const expected = kvRowsBytes(spec, nPositions, elementType === 'f16' ? 2 : 4);
    if (rows.elementType !== elementType || rows.data.byteLength !== expected) {
      throw new LlmError(
        'invalid-request',
        `${op}: ${rows.data.byteLength} bytes of ${rows.elementType} KV do not match this cache ` +
          `(${expected} bytes of ${elementType} for ${nPositions} positions)`,
      );
    }
  }
}

/** One layer's K and V cache of one slot as f32 views (at least `nPositions · kvLayerCols` values each). */
export type F32KvLayer = (layer: number) => { readonly k: Float32Array; readonly v: Float32Array };

/** `readKv` of an f32 cache: the first `nPositions` positions of every layer's K, then V, one after another. */
export function readF32KvRows(
  op: string,
  spec: KvCacheSpec,
  slot: number,
  nPositions: number,
  layer: F32KvLayer,
): KvRows {
  checkKvRows(op, spec, slot, nPositions, 'f32');
  const out = new Float32Array(2 * nPositions * kvPositionCols(spec)); // per layer: K then V [nPositions, cols_l] f32
  let at = 0;
  for (let l = 0; l < spec.layers.length; l++) {
    const len = nPositions * kvLayerCols(spec, l);
    if (len === 0) continue;
    const { k, v } = layer(l);
    out.set(k.subarray(0, len), at);
    out.set(v.subarray(0, len), at + len);
    at += 2 * len;
  }
  return { elementType: 'f32', nPositions, data: new Uint8Array(out.buffer) };
}

/** `writeKv` of an f32 cache: the inverse of `readF32KvRows`. */
export function writeF32KvRows(op: string, spec: KvCacheSpec, slot: number, rows: KvRows, layer: F32KvLayer): void {
  checkKvRows(op, spec, slot, rows.nPositions, 'f32', rows);
  const src = new Float32Array(rows.data.slice().buffer); // aligned copy: rows.data may start at any byte
  let at = 0;
  for (let l = 0; l < spec.layers.length; l++) {
    const len = rows.nPositions * kvLayerCols(spec, l);
    if (len === 0) continue;
    const { k, v } = layer(l);
    k.set(src.subarray(at, at + len));
    v.set(src.subarray(at + len, at + 2 * len));
    at += 2 * len;
  }
}
