/**
 * The WASM backend's row-pair layout for Q4_0, Q5_0, Q8_0 and MXFP4 weights: rows 2p and 2p + 1 are stored block by block
 * alternately (A₀ B₀ A₁ B₁ …) in the span the two rows take in the GGUF file, and an odd row count is padded with a
 * zero row. Single-token matvecs read two rows at a time (one activation load serves both); in GGUF layout those
 * two rows are two memory streams, which the hardware prefetcher does not keep up with when decode streams the
 * weights from memory (Q4_0 8–13 GB/s vs 16–17 in cache); interleaved they are one stream (14–16 GB/s,
 * `test/bench/wasm-kernels.bench.ts --stream`). Same bytes, so memory use is unchanged but for the padding row.
 * Uploads copy the GGUF rows into memory and rearrange them there (wasm/assembly/row-pairs.ts).
 * Row r starts at (r >> 1)·2·rowBytes + (r & 1)·blockBytes and its blocks are 2·blockBytes apart
 * (wasm/assembly/gemv-q32.ts `rowAt`).
 */

import type { GgmlType } from '../../gguf/types.js';
import { QUANT_TYPES } from '../../quant/index.js';

/** ggml types stored row-pair interleaved (`QuantType.wasm.rowPairs` in the quant registry), with their block bytes. */
export const ROW_PAIR_TYPES: ReadonlyMap<GgmlType, number> = new Map(
  QUANT_TYPES.flatMap((t): [GgmlType, number][] =>
    t.wasm !== 'dequantize' && t.wasm.rowPairs === true ? [[t.id, t.blockBytes]] : [],
  ),
);

/** Rows stored for a matrix of `nRows` rows (padded to even). */
export function storedRows(nRows: number): number {
  return nRows + (nRows & 1);
}

/**
 * Writes the GGUF-layout matrix `src` ([nRows, rowBytes]) into `dst` (storedRows(nRows)·rowBytes bytes) in row-pair
 * layout; the padding row is zeros. The reference for the kernels' in-place `interleave_row_pairs`, which uploads
 * use (this per-block copy takes seconds on a whole model).
 */
export function interleaveRowPairs(
  src: Uint8Array,
  dst: Uint8Array,
  nRows: number,
  rowBytes: number,
  blockBytes: number,
): void {
  const nb = rowBytes / blockBytes;
  for (let p = 0; 2 * p < nRows; p++) {
    const base = 2 * p * rowBytes;
    const hasB = 2 * p + 1 < nRows;
    for (let b = 0; b < nb; b++) {
      const to = base + 2 * b * blockBytes;
      const a = base + b * blockBytes;
      dst.set(src.subarray(a, a + blockBytes), to);
      if (hasB) dst.set(src.subarray(a + rowBytes, a + rowBytes + blockBytes), to + blockBytes);
      else dst.fill(0, to + blockBytes, to + 2 * blockBytes);
    }
  }
}

/**
 * Copies row r of a row-pair matrix (starting at byte `at` of `mem`) back into GGUF layout: `out` gets its rowBytes
 * bytes. A byte loop, no views: it runs once per embedded token.
 */
export function readPairedRow(
  mem: Uint8Array,
  at: number,
  r: number,
  rowBytes: number,
  blockBytes: number,
  out: Uint8Array,
): void {
  const nb = rowBytes / blockBytes;
  let from = at + (r >> 1) * 2 * rowBytes + (r & 1) * blockBytes;
  let to = 0;
  for (let b = 0; b < nb; b++, from += 2 * blockBytes) {
    for (let j = 0; j < blockBytes; j++) out[to++] = mem[from + j];
  }
}
