/**
 * `QuantType`: everything webgguf knows about one ggml tensor type, in one record. Each type lives in its own file
 * (`src/quant/q4_0.ts` …) and is listed once in `src/quant/index.ts`; backends, the loader and the tests read the
 * facts from there (the WASM kernel table, the row-pair layout and the non-finite scan are derived from it; the
 * tests loop over the registry and fail when a type lacks golden vectors or a kernel on a backend).
 */

import type { GgmlType } from '../gguf/types.js';

/**
 * How the WASM backend multiplies a weight of one type (`src/backend/wasm/kernel-exports.ts` derives its table).
 * @public
 */
export interface WasmQuantPath {
  /** Export of the kernel module (wasm/assembly/index.ts) computing out = W·x for this weight type. */
  readonly kernel: `gemv_${string}`;
  /** 'q8': x is first quantized to Q8 activation blocks (wasm/assembly/q8-activations.ts); 'f32': x is read as is. */
  readonly activations: 'q8' | 'f32';
  /** Rows stored pair-interleaved at upload (src/backend/wasm/row-pairs.ts); the kernel reads that layout. */
  readonly rowPairs?: boolean;
}

/**
 * How the WebGPU backend stores and reads one type (the facts of `GpuQuantLayout` in src/backend/webgpu/upload.ts
 * and of gemv_bcast's fast block products). Optional while the WebGPU tables are wired to the registry.
 * @public
 */
export interface WebGpuQuantPath {
  /** Quant snippet `shaders/quant/<snippet>.wgsl` defining load4/load1 over the repacked words. */
  readonly snippet: string;
  /** Leading bytes of a GGUF block moved to its end at upload (the lone f16 scale), so quants start word aligned. */
  readonly headToTail: number;
  /** Blocks per 16-byte-aligned group (quants first, then the scales); 0 = plain blocks. */
  readonly groupBlocks: number;
  /** `shaders/quant/<snippet>_dot32.wgsl` exists: a fast dot32 for gemv_bcast, which can then fuse gate·up·GLU. */
  readonly fastDot32: boolean;
  /**
   * `shaders/quant/<snippet>_rows.wgsl` exists: the hardware kernel set stores this type row-split (per row the
   * blocks' bodies, then the row's f16 scales — exactly the GGUF's bytes), see `GpuQuantLayout.rowSplit`.
   */
  readonly hardwareRows?: boolean;
}

/** One ggml tensor type. */
export interface QuantType {
  readonly id: GgmlType;
  /** ggml's name, upper case (`Q4_K`); its lower case names the type's files (`q4_k.ts`, `q4_k.wgsl`, `q4_k.json`). */
  readonly name: string;
  /** Values per block (equal to ggml's, `GGML_TYPES`; checked by test/unit/quant/registry.test.ts). */
  readonly blockElements: number;
  /** Bytes per block (equal to ggml's, `GGML_TYPES`). */
  readonly blockBytes: number;
  /**
   * Byte offsets of the f16 scale fields inside a block (`d`, and `m`/`dmin` where the type has one). Empty for the
   * float types. The loader's non-finite scan reads them (src/model/non-finite-scan.ts).
   */
  readonly f16Scales: readonly number[];
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
  /**
   * The WASM backend's fused matvec for this type, or 'dequantize': rows are dequantized chunk by chunk with
   * `dequantizeRow` and multiplied by `gemv_f32`.
   */
  readonly wasm: WasmQuantPath | 'dequantize';
  /** The WebGPU backend's layout of this type (every supported type has one). */
  readonly webgpu: WebGpuQuantPath;
}
