/** KV geometry helpers of tests. */

import type { KvLayerSpec } from '../../src/backend/ops.js';

/** `nLayers` KV layers of the same geometry. */
export function uniformKvLayers(nLayers: number, nKvHeads: number, headDim: number): KvLayerSpec[] {
  return Array.from({ length: nLayers }, () => ({ nKvHeads, headDim }));
}
