/**
 * `QuantType`: what one ggml tensor type contributes to the library. Each type lives in its own file
 * (`src/quant/q4_0.ts` …) and is listed once in `src/quant/index.ts`; backends look types up there.
 */

import type { GgmlType } from '../gguf/types.js';

/** One ggml tensor type. */
export interface QuantType {
  readonly id: GgmlType;
  /** ggml's name, upper case (`Q4_K`). */
  readonly name: string;
  readonly blockElements: number;
  readonly blockBytes: number;
  /**
   * Dequantizes `nElements` values (a multiple of blockElements) from `src` (ggml blocks, starting at a block
   * boundary) into `dst`. Bit-exact with ggml's `dequantize_row_*` (`to_float`).
   */
  dequantizeRow(src: Uint8Array, dst: Float32Array, nElements: number): void;
  /**
   * Quantizes `src` (length a multiple of blockElements) into `dst` blocks, as ggml's reference
   * `quantize_row_*_ref`. Optional: used to make test and benchmark models.
   */
  quantizeRow?(src: Float32Array, dst: Uint8Array): void;
  /** Name of the WASM fused dot kernel, when one exists (e.g. 'gemv_q4_0'). */
  readonly wasmSymbol?: string;
}
