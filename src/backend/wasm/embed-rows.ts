/**
 * Embedding lookup on the WASM heap: the rows of the step's token ids copied (f32 tables) or dequantized (any quant
 * type) into the output activation; an id outside the table is `invalid-request` naming it.
 */

import { LlmError } from '../../errors.js';
import { GgmlType } from '../../gguf/types.js';
import { getQuantType } from '../../quant/index.js';
import { readPairedRow } from './row-pairs.js';
import { readRows4Row } from './rows4-layout.js';
import type { WasmWeight } from './wasm-weight-stream.js';

/**
 * out[i] = table[tokens[i]] for i < n: `out` is the f32 index of row 0 of an activation `outCols` wide; `rowBytes`
 * gives a table row's bytes in GGUF order (tables stored in row pairs are read back through it).
 */
export function embedRows(
  f32: Float32Array,
  t: WasmWeight,
  tokens: ArrayLike<number>,
  out: number,
  outCols: number,
  n: number,
  rowBytes: (w: WasmWeight, row: number) => Uint8Array,
): void {
  const cols = t.rowLength;
  const qt = t.type === GgmlType.F32 ? null : getQuantType(t.type);
  for (let i = 0; i < n; i++) {
    const id = tokens[i]!;
    if (!(id >= 0 && id < t.nRows)) {
      throw new LlmError(
        'invalid-request',
        `embedding token ${i}: id ${id} is outside the vocabulary (0…${t.nRows - 1})`,
        {
          details: { index: i, token: id, vocabSize: t.nRows },
        },
      );
    }
    const dst = out + i * outCols;
    if (qt === null) {
      const src = t.byteOffset + id * t.rowBytes;
      f32.set(f32.subarray(src >>> 2, (src >>> 2) + cols), dst);
    } else {
      qt.dequantizeRow(rowBytes(t, id), f32.subarray(dst, dst + cols), cols);
    }
  }
}

/**
 * Row r of a quantized weight in GGUF layout: a view into the heap for GGUF rows, else `copy` (rowBytes bytes)
 * gathered from its row pair or 4-row group.
 */
export function weightRow(u8: Uint8Array, w: WasmWeight, r: number, copy: Uint8Array): Uint8Array {
  if (w.rows4) readRows4Row(u8, w.byteOffset, r, w.rowBytes, w.rows4, copy);
  else if (w.pairBlockBytes) readPairedRow(u8, w.byteOffset, r, w.rowBytes, w.pairBlockBytes, copy);
  else return u8.subarray(w.byteOffset + r * w.rowBytes, w.byteOffset + (r + 1) * w.rowBytes);
  return copy;
}
