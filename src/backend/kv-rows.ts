/** Checks shared by every backend's `readKv` / `writeKv` (the layout is `KvRows`'). */

import { LlmError } from '../errors.js';
import type { KvCacheSpec, KvRows } from './ops.js';

/** Bytes of the `KvRows` of `nPositions` positions for `spec` with `elementBytes`-byte values. */
function kvRowsBytes(spec: KvCacheSpec, nPositions: number, elementBytes: number): number {
  return spec.nLayers * 2 * nPositions * spec.nKvHeads * spec.headDim * elementBytes;
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

/** One layer's K and V cache of one slot as f32 views (at least `nPositions · nKvHeads · headDim` values each). */
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
  const len = nPositions * spec.nKvHeads * spec.headDim;
  const out = new Float32Array(spec.nLayers * 2 * len); // (nLayers, 2, nPositions·nKvHeads·headDim) f32
  for (let l = 0; l < spec.nLayers; l++) {
    const { k, v } = layer(l);
    out.set(k.subarray(0, len), 2 * l * len);
    out.set(v.subarray(0, len), (2 * l + 1) * len);
  }
  return { elementType: 'f32', nPositions, data: new Uint8Array(out.buffer) };
}

/** `writeKv` of an f32 cache: the inverse of `readF32KvRows`. */
export function writeF32KvRows(op: string, spec: KvCacheSpec, slot: number, rows: KvRows, layer: F32KvLayer): void {
  checkKvRows(op, spec, slot, rows.nPositions, 'f32', rows);
  const len = rows.nPositions * spec.nKvHeads * spec.headDim;
  const src = new Float32Array(rows.data.slice().buffer); // aligned copy: rows.data may start at any byte
  for (let l = 0; l < spec.nLayers; l++) {
    const { k, v } = layer(l);
    k.set(src.subarray(2 * l * len, (2 * l + 1) * len));
    v.set(src.subarray((2 * l + 1) * len, (2 * l + 2) * len));
  }
}
