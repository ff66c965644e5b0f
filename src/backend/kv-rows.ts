/** Checks shared by every backend's `readKv` / `writeKv` (the layout is `KvRows`'). */

import { LlmError } from '../errors.js';
import type { KvCacheSpec, KvRows } from './ops.js';

/** Bytes of the `KvRows` of `nPositions` positions for `spec` with `elementBytes`-byte values. */
export function kvRowsBytes(spec: KvCacheSpec, nPositions: number, elementBytes: number): number {
  return spec.nLayers * 2 * nPositions * spec.nKvHeads * spec.headDim * elementBytes;
}

/** Throws `LlmError('invalid-request')` unless `slot` and `nPositions` (and `rows`, when writing) fit `spec`. */
export function checkKvRows(op: string, spec: KvCacheSpec, slot: number, nPositions: number, elementType: KvRows['elementType'], rows?: KvRows): void {
  if (!(Number.isInteger(slot) && slot >= 0 && slot < spec.nSlots) || !(Number.isInteger(nPositions) && nPositions >= 0 && nPositions <= spec.contextLength)) {
    throw new LlmError('invalid-request', `${op}: slot ${slot} / ${nPositions} positions are outside the KV cache (${spec.nSlots} slots, context ${spec.contextLength})`);
  }
  if (rows !== undefined) {
    const expected = kvRowsBytes(spec, nPositions, elementType === 'f16' ? 2 : 4);
    if (rows.elementType !== elementType || rows.data.byteLength !== expected) {
      throw new LlmError('invalid-request', `${op}: ${rows.data.byteLength} bytes of ${rows.elementType} KV do not match this cache ` +
        `(${expected} bytes of ${elementType} for ${nPositions} positions)`);
    }
  }
}
