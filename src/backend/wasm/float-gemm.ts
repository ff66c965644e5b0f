/**
 * Multi-token matmuls of F32 and F16 weights on WASM through `gemm_f32`'s 3-row × 3-token tiles
 * (wasm/assembly/gemm-float.ts) instead of one `gemv` dot per (row, token): F16 rows are first converted to f32 once per
 * call (`f16_rows_to_f32`, into scratch), not once per token. Bit-identical to the gemv path (same accumulation per
 * dot), so it applies to any token count worth tiling: the vision encoder's patch rows, F16/F32 prefill.
 */

import { GgmlType } from '../../gguf/types.js';
import type { GemvName } from './kernel-exports.js';

/** Fewest tokens a call tiles (below, the gemv reads each row once per token anyway). */
const MIN_TOKENS = 3;

/** A matvec runner over rows 0 … rows−1 (the backend's, threaded when large). */
export type RunRows = (
  name: GemvName,
  w: number,
  x: number,
  out: number,
  k: number,
  rows: number,
  n: number,
  outStride: number,
) => void;

/** The weight fields this needs. */
interface FloatWeight {
  readonly type: GgmlType;
  readonly byteOffset: number;
  readonly rowLength: number;
  readonly nRows: number;
}

/** Whether `n` tokens times weights of `type` go through the tiles. */
export function usesFloatGemm(type: GgmlType, n: number): boolean {
  return n >= MIN_TOKENS && (type === GgmlType.F32 || type === GgmlType.F16);
}

/** Bytes of the contiguous copy of x the backend makes at the scratch's start when its rows are wider than k. */
function xCopyBytes(n: number, k: number, xCols: number): number {
  return xCols === k ? 0 : Math.ceil((n * k * 4) / 64) * 64;
}

/** Scratch bytes a call needs: x's copy (when made) then the f32 rows of an F16 weight (F32 is multiplied in place). */
export function floatGemmScratchBytes(w: FloatWeight, n: number, xCols: number): number {
  return xCopyBytes(n, w.rowLength, xCols) + (w.type === GgmlType.F16 ? w.nRows * w.rowLength * 4 : 0);
}

/**
 * out [n, outStride] = x [n, k] · Wᵀ, x contiguous f32 at byte `x` (at `scratch` itself when copied there from rows
 * of `xCols`); `scratch`: floatGemmScratchBytes bytes, 64-byte aligned.
 */
export function floatGemm(
  run: RunRows,
  w: FloatWeight,
  x: number,
  out: number,
  outStride: number,
  n: number,
  scratch: number,
  xCols: number,
): void {
  const k = w.rowLength;
  let rows = w.byteOffset;
  if (w.type === GgmlType.F16) {
    rows = scratch + xCopyBytes(n, k, xCols);
    run('f16_rows_to_f32', w.byteOffset, 0, rows, k, w.nRows, 1, 0); // [nRows, k] f32
  }
  run('gemm_f32', rows, x, out, k, w.nRows, n, outStride);
}
