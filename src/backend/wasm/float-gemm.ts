/**
 * Multi-token matmuls of F32 and F16 weights on WASM through 3-row × 3-token tiles (wasm/assembly/gemm-float.ts:
 * `gemm_f32`, and `gemm_f16`, which converts each F16 row triple into L1-resident scratch per block of tokens) instead
 * of one `gemv` dot per (row, token). Bit-identical to the gemv path (same conversion, same accumulation per dot), so
 * it applies to any token count worth tiling: the vision encoder's patch rows, encoder embedders, F16/F32 prefill.
 */

import { GgmlType } from '../../gguf/types.js';
import type { GemvName } from './kernel-exports.js';

/** Fewest tokens a call tiles (below, the gemv reads each row once per token anyway). */
const MIN_TOKENS = 3;

/** Bytes of gemm_f16's parameter block ([weights, scratch] u32), kept 64-byte aligned before its scratch. */
const PARAM_BYTES = 64;

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

/**
 * Scratch bytes a call needs: x's copy (when made), then for an F16 weight gemm_f16's parameter block and the f32 row
 * triples of its chunks ([nRows, k] f32 at most; each chunk of rows uses its own first three rows' place).
 */
export function floatGemmScratchBytes(w: FloatWeight, n: number, xCols: number): number {
  return xCopyBytes(n, w.rowLength, xCols) + (w.type === GgmlType.F16 ? PARAM_BYTES + w.nRows * w.rowLength * 4 : 0);
}

/**
 * out [n, outStride] = x [n, k] · Wᵀ, x contiguous f32 at byte `x` (at `scratch` itself when copied there from rows
 * of `xCols`); `scratch`: floatGemmScratchBytes bytes, 64-byte aligned; `i32` the heap's view (gemm_f16's parameter
 * block is written through it).
 */
export function floatGemm(
  run: RunRows,
  i32: Int32Array,
  w: FloatWeight,
  x: number,
  out: number,
  outStride: number,
  n: number,
  scratch: number,
  xCols: number,
): void {
  const k = w.rowLength;
  if (w.type === GgmlType.F16) {
    const p = scratch + xCopyBytes(n, k, xCols);
    i32[p >>> 2] = w.byteOffset;
    i32[(p >>> 2) + 1] = p + PARAM_BYTES; // f32 row triples [nRows, k]
    run('gemm_f16', p, x, out, k, w.nRows, n, outStride);
    return;
  }
  run('gemm_f32', w.byteOffset, x, out, k, w.nRows, n, outStride);
}
