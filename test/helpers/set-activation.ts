/** How kernel tests put known values into an activation: an f32 table of them, embedded row by row in one step. */

import type { Activation, Ops } from '../../src/backend/ops.js';
import { GgmlType } from '../../src/gguf/types.js';

/** A new activation `label` [rows, cols] holding `values` (row-major). */
export async function setActivation(
  ops: Ops,
  values: Float32Array,
  rows: number,
  cols: number,
  label = 'a',
): Promise<Activation> {
  const table = await ops.uploadWeight(
    { name: `${label}-values`, type: GgmlType.F32, shape: [cols, rows] },
    new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength)),
  );
  const a = ops.createActivation(label, rows, cols);
  ops.beginStep({ tokens: Int32Array.from({ length: rows }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(a, table, rows);
  ops.endStep();
  return a;
}
