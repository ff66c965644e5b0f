/** KV geometry helpers and checks shared by every backend (per-layer widths, attention geometry, `readKv` / `writeKv`). */

import { LlmError } from '../errors.js';
import { type KvType, kvRowBytes } from './kv-type.js';
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

/** Bytes of a whole KV cache of `spec` stored as `type`: K and V of every position, layer and slot. */
export function kvCacheBytes(spec: KvCacheSpec, type: KvType): number {
  return spec.nSlots * kvRowsBytes(spec, spec.contextLength, type);
}

/** Bytes of the `KvRows` of `nPositions` positions for `spec` stored as `type`. */
function kvRowsBytes(spec: KvCacheSpec, nPositions: number, type: KvType): number {
  let bytes = 0;
  for (let l = 0; l < spec.layers.length; l++) bytes += 2 * nPositions * kvRowBytes(type, kvLayerCols(spec, l));
  return bytes;
}

/** Throws `LlmError('invalid-request')` unless `slot` and `nPositions` (and `rows`, when writing) fit `spec`. */
export function checkKvRows(
  op: string,
  spec: KvCacheSpec,
  slot: number,
  nPositions: number,
  elementType: KvType,
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
    const expected = kvRowsBytes(spec, nPositions, elementType);
    if (rows.elementType !== elementType || rows.data.byteLength !== expected) {
      throw new LlmError(
        'invalid-request',
        `${op}: ${rows.data.byteLength} bytes of ${rows.elementType} KV do not match this cache ` +
          `(${expected} bytes of ${elementType} for ${nPositions} positions)`,
      );
    }
  }
}

/** One layer's K and V cache of one slot as bytes (at least `nPositions · kvRowBytes` each), rows in position order. */
export type KvLayerBytes = (layer: number) => { readonly k: Uint8Array; readonly v: Uint8Array };

/** `readKv` of a cache held in host-visible bytes: the first `nPositions` rows of every layer's K, then V. */
export function readKvBytes(
  op: string,
  spec: KvCacheSpec,
  slot: number,
  nPositions: number,
  type: KvType,
  layer: KvLayerBytes,
): KvRows {
  checkKvRows(op, spec, slot, nPositions, type);
  const out = new Uint8Array(kvRowsBytes(spec, nPositions, type)); // per layer: K then V [nPositions, row bytes]
  let at = 0;
  for (let l = 0; l < spec.layers.length; l++) {
    const len = nPositions * kvRowBytes(type, kvLayerCols(spec, l));
    if (len === 0) continue;
    const { k, v } = layer(l);
    out.set(k.subarray(0, len), at);
    out.set(v.subarray(0, len), at + len);
    at += 2 * len;
  }
  return { elementType: type, nPositions, data: out };
}

/** `writeKv` of a cache held in host-visible bytes: the inverse of `readKvBytes`. */
export function writeKvBytes(
  op: string,
  spec: KvCacheSpec,
  slot: number,
  rows: KvRows,
  type: KvType,
  layer: KvLayerBytes,
): void {
  checkKvRows(op, spec, slot, rows.nPositions, type, rows);
  let at = 0;
  for (let l = 0; l < spec.layers.length; l++) {
    const len = rows.nPositions * kvRowBytes(type, kvLayerCols(spec, l));
    if (len === 0) continue;
    const { k, v } = layer(l);
    k.set(rows.data.subarray(at, at + len));
    v.set(rows.data.subarray(at + len, at + 2 * len));
    at += 2 * len;
  }
}
