/**
 * GGUF and ggml format facts: the tensor type enum with every type's block geometry, the metadata value types, and
 * the parsed-file shapes shared by the parser, the writer and every consumer.
 * Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md; block structs: ggml/src/ggml-common.h.
 */

/** ggml tensor types (`enum ggml_type`). Ids 4, 5, 31–33 and 36–38 were removed upstream and are unknown here. */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
}

/** Block geometry of one ggml type: `blockBytes` bytes hold `blockElements` values. */
export interface GgmlTypeInfo {
  readonly type: GgmlType;
  /** Name as ggml prints it (`q4_K` style is normalised to upper case: `Q4_K`). */
  readonly name: string;
  readonly blockElements: number;
  readonly blockBytes: number;
}

const info = (type: GgmlType, blockElements: number, blockBytes: number): GgmlTypeInfo => ({
  type,
  name: GgmlType[type],
  blockElements,
  blockBytes,
});

/**
 * Every known ggml type's block geometry (ggml-common.h `block_*` structs; QK_K = 256).
 * Keyed by numeric id. A GGUF whose tensor uses an id missing here is invalid; unknown ids elsewhere are fine.
 */
export const GGML_TYPES: ReadonlyMap<number, GgmlTypeInfo> = new Map(
  [
    info(GgmlType.F32, 1, 4),
    info(GgmlType.F16, 1, 2),
    info(GgmlType.Q4_0, 32, 18), // f16 d; u8 qs[16]
    info(GgmlType.Q4_1, 32, 20), // f16 d, m; u8 qs[16]
    info(GgmlType.Q5_0, 32, 22), // f16 d; u8 qh[4]; u8 qs[16]
    info(GgmlType.Q5_1, 32, 24), // f16 d, m; u8 qh[4]; u8 qs[16]
    info(GgmlType.Q8_0, 32, 34), // f16 d; i8 qs[32]
    info(GgmlType.Q8_1, 32, 36), // f16 d, s; i8 qs[32]
    info(GgmlType.Q2_K, 256, 84), // u8 scales[16]; u8 qs[64]; f16 d, dmin
    info(GgmlType.Q3_K, 256, 110), // u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d
    info(GgmlType.Q4_K, 256, 144), // f16 d, dmin; u8 scales[12]; u8 qs[128]
    info(GgmlType.Q5_K, 256, 176), // f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]
    info(GgmlType.Q6_K, 256, 210), // u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d
    info(GgmlType.Q8_K, 256, 292), // f32 d; i8 qs[256]; i16 bsums[16]
    info(GgmlType.IQ2_XXS, 256, 66),
    info(GgmlType.IQ2_XS, 256, 74),
    info(GgmlType.IQ3_XXS, 256, 98),
    info(GgmlType.IQ1_S, 256, 50),
    info(GgmlType.IQ4_NL, 32, 18), // f16 d; u8 qs[16]
    info(GgmlType.IQ3_S, 256, 110),
    info(GgmlType.IQ2_S, 256, 82),
    info(GgmlType.IQ4_XS, 256, 136), // f16 d; u16 scales_h; u8 scales_l[4]; u8 qs[128]
    info(GgmlType.I8, 1, 1),
    info(GgmlType.I16, 1, 2),
    info(GgmlType.I32, 1, 4),
    info(GgmlType.I64, 1, 8),
    info(GgmlType.F64, 1, 8),
    info(GgmlType.IQ1_M, 256, 56),
    info(GgmlType.BF16, 1, 2),
    info(GgmlType.TQ1_0, 256, 54),
    info(GgmlType.TQ2_0, 256, 66),
    info(GgmlType.MXFP4, 32, 17), // u8 e (E8M0); u8 qs[16]
  ].map((i) => [i.type, i]),
);

/** GGUF metadata value types (`enum gguf_type`). */
export enum GgufValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/**
 * A decoded array of fixed-size values: one typed array per GGUF element type (UINT8 → `Uint8Array` … FLOAT64 →
 * `Float64Array`, 64-bit integers → `BigUint64Array`/`BigInt64Array`, BOOL → `Uint8Array` of 0/1). Typed arrays
 * keep a 64 MiB u8 array at 64 MiB (a JS array would take 8× that).
 */
export type GgufNumericArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigUint64Array
  | BigInt64Array;

/**
 * A metadata value. 64-bit integers are `bigint` (exact); every other number is `number`. The parser returns arrays
 * of numbers and booleans as typed arrays (`GgufNumericArray`) and arrays of strings or arrays as JS arrays; the
 * writer takes either form. Arrays keep their element type in `GgufFile.metadataTypes`.
 */
export type GgufValue = number | bigint | boolean | string | GgufNumericArray | GgufValue[];

/** True for an array value of either form (JS array or typed array). */
export function isGgufArray(v: GgufValue | undefined): v is GgufNumericArray | GgufValue[] {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

/** Type of a metadata value as stored: scalar type, or ARRAY with its element type (recursively for nested arrays). */
export type GgufValueTypeInfo =
  | { readonly type: Exclude<GgufValueType, GgufValueType.ARRAY> }
  | { readonly type: GgufValueType.ARRAY; readonly element: GgufValueTypeInfo };

/** One tensor's entry in the GGUF tensor table. */
export interface GgufTensorInfo {
  readonly name: string;
  readonly type: GgmlType;
  /** ggml `ne` order: shape[0] is the row length (contiguous), shape[1] the number of rows, … (1–4 dims). */
  readonly shape: readonly number[];
  /** Byte offset of the data relative to `GgufFile.tensorDataOffset`. */
  readonly offset: number;
  /** Bytes of data (rows × blocks per row × block bytes). */
  readonly byteLength: number;
  /** Product of `shape`. */
  readonly nElements: number;
}

/** A parsed GGUF file: everything but the tensor data, which stays in its `ByteSource`. */
export interface GgufFile {
  readonly version: 2 | 3;
  /** Metadata in file order. A null-prototype object: keys such as `__proto__` are plain data. */
  readonly metadata: Readonly<Record<string, GgufValue>>;
  /** Stored type of every metadata key. */
  readonly metadataTypes: Readonly<Record<string, GgufValueTypeInfo>>;
  /** Tensor table in file order. */
  readonly tensors: readonly GgufTensorInfo[];
  /** `general.alignment` or the default 32. */
  readonly alignment: number;
  /** Absolute byte offset where tensor data starts (aligned). */
  readonly tensorDataOffset: number;
  /** Size of the source in bytes. */
  readonly fileSize: number;
}
