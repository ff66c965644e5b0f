/**
 * The quant-type registry: every `QuantType` webgguf implements, looked up by `GgmlType`. Also the two conveniences
 * most callers need: dequantize a whole tensor's bytes, and compute a tensor's byte length from its shape.
 *
 * Adding a type (the tests demand each step):
 * 1. `src/quant/<name>.ts` exporting its `QuantType` (geometry equal to `GGML_TYPES`, `f16Scales`, bit-exact
 *    `dequantizeRow`, reference `quantizeRow` unless the type is in DEQUANTIZE_ONLY, `wasm`: a kernel or
 *    'dequantize', `webgpu` layout facts), listed once in QUANT_TYPES below.
 * 2. Golden vectors `test/unit/quant/vectors/<name>.json` from ggml (scripts/oracle/make-quant-vectors.mjs).
 * 3. WASM: nothing for 'dequantize'; a fused kernel is an export of wasm/assembly/index.ts named in GEMV_NAMES and
 *    KernelExports (src/backend/wasm/kernel-exports.ts), then `npm run build:wasm`.
 * 4. WebGPU: the decoder `shaders/quant/<snippet>.wgsl` (plus `<snippet>_dot32.wgsl` when `fastDot32`, and
 *    `<snippet>_rows.wgsl` for the hardware kernels' row-split form when `hardwareRows`; with `softwareRecode`, the
 *    software kernels' re-coded form `<recode>.wgsl` and `<recode>_dot32.wgsl` instead); the backend's tables
 *    (src/backend/webgpu/upload.ts, gemv-bcast.ts) are built from the record.
 * test/unit/quant/backend-coverage.test.ts fails, naming the type, until all four are there.
 */

import { LlmError } from '../errors.js';
import { GGML_TYPES, GgmlType } from '../gguf/types.js';
import { bf16 } from './bf16.js';
import { f16 } from './f16.js';
import { f32 } from './f32.js';
import { iq1_m } from './iq1_m.js';
import { iq1_s } from './iq1_s.js';
import { iq2_s } from './iq2_s.js';
import { iq2_xs } from './iq2_xs.js';
import { iq2_xxs } from './iq2_xxs.js';
import { iq3_s } from './iq3_s.js';
import { iq3_xxs } from './iq3_xxs.js';
import { iq4_nl } from './iq4_nl.js';
import { iq4_xs } from './iq4_xs.js';
import { q2_k } from './q2_k.js';
import { q3_k } from './q3_k.js';
import { q4_0 } from './q4_0.js';
import { q4_1 } from './q4_1.js';
import { q4_k } from './q4_k.js';
import { q5_0 } from './q5_0.js';
import { q5_1 } from './q5_1.js';
import { q5_k } from './q5_k.js';
import { q6_k } from './q6_k.js';
import { mxfp4 } from './mxfp4.js';
import { q8_0 } from './q8_0.js';
import type { QuantType } from './quant-type.js';

export type { QuantType } from './quant-type.js';

/** Every supported type, in ggml id order. */
export const QUANT_TYPES: readonly QuantType[] = [
  f32,
  f16,
  q4_0,
  q4_1,
  q5_0,
  q5_1,
  q8_0,
  q2_k,
  q3_k,
  q4_k,
  q5_k,
  q6_k,
  iq2_xxs,
  iq2_xs,
  iq3_xxs,
  iq1_s,
  iq4_nl,
  iq3_s,
  iq2_s,
  iq4_xs,
  iq1_m,
  bf16,
  mxfp4,
];

/**
 * The types webgguf reads but does not write: no `quantizeRow`. ggml's quantizers for these codebook types are grid
 * searches (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS refuse to run without an importance matrix; IQ2_S, IQ3_XXS, IQ3_S search
 * neighbour tables built at start-up), so models in them come from llama.cpp (scripts/oracle/quantize-model.mjs, or
 * ggml_quantize_chunk with an importance matrix). Every other type has its reference quantizer.
 */
export const DEQUANTIZE_ONLY: ReadonlySet<GgmlType> = new Set([
  GgmlType.IQ2_XXS,
  GgmlType.IQ2_XS,
  GgmlType.IQ3_XXS,
  GgmlType.IQ1_S,
  GgmlType.IQ3_S,
  GgmlType.IQ2_S,
  GgmlType.IQ1_M,
]);

const BY_ID: ReadonlyMap<GgmlType, QuantType> = new Map(QUANT_TYPES.map((t) => [t.id, t]));

/** Name of a ggml type id for messages (`Q4_K`, or `type 99` when unknown). */
function ggmlTypeName(type: number): string {
  return GGML_TYPES.get(type)?.name ?? `type ${type}`;
}

/** True when webgguf can dequantize `type`. */
export function isSupportedType(type: number): boolean {
  return BY_ID.has(type);
}

/**
 * The `QuantType` for `type`.
 * @throws LlmError('unsupported-type') naming the type when webgguf has no implementation of it.
 */
export function getQuantType(type: GgmlType): QuantType {
  const t = BY_ID.get(type);
  if (t === undefined) {
    const name = ggmlTypeName(type);
    throw new LlmError(
      'unsupported-type',
      `tensor type ${name} (ggml id ${type}) is not supported by webgguf; supported: ${QUANT_TYPES.map((q) => q.name).join(', ')}. ` +
        'Use a model file quantized to one of these types.',
      { details: { type: name, id: type } },
    );
  }
  return t;
}

/**
 * Dequantizes `nElements` values of `type` from `bytes` (whole blocks from the start) into a new Float32Array.
 * @throws LlmError('unsupported-type') or LlmError('invalid-request') on a short source or partial block.
 */
export function dequantize(type: GgmlType, bytes: Uint8Array, nElements: number): Float32Array {
  const t = getQuantType(type);
  const out = new Float32Array(nElements); // (nElements) f32
  t.dequantizeRow(bytes, out, nElements);
  return out;
}

/**
 * Bytes of a tensor of `type` with ggml shape `shape` (shape[0] = row length, which must be whole blocks).
 * Works for every type ggml knows, supported or not (the GGUF parser needs sizes of tensors it will not read).
 * @throws LlmError('unsupported-type') for an unknown type id, LlmError('gguf-invalid') for a bad shape.
 */
export function tensorByteLength(type: GgmlType, shape: readonly number[]): number {
  const info = GGML_TYPES.get(type);
  if (info === undefined) {
    throw new LlmError('unsupported-type', `tensor type id ${type} is unknown to ggml/webgguf`, {
      details: { type: `type ${type}`, id: type },
    });
  }
  let n = 1;
  for (const d of shape) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new LlmError('gguf-invalid', `tensor shape [${shape.join(', ')}] has an invalid dimension ${d}`, {
        details: { shape: shape.map(Number) },
      });
    }
    n *= d;
  }
  const rowLength = shape[0] ?? 1;
  if (rowLength % info.blockElements !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `tensor row length ${rowLength} is not a multiple of ${info.name}'s block size ${info.blockElements}`,
      { details: { type: info.name, rowLength, blockElements: info.blockElements } },
    );
  }
  return (n / info.blockElements) * info.blockBytes;
}
