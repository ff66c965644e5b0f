/**
 * Decoding of GGUF metadata values (gguf_type 0–12): scalars, length-prefixed UTF-8 strings and arrays, nested up
 * to a depth limit. Every length is checked against the bytes left in the file before anything is allocated.
 * Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md ("Standardized key-value pairs", `gguf_value_t`).
 */

import type { ByteCursor } from './byte-cursor.js';
import { type GgufLimits, MIN_BYTES, checkCount, invalid } from './limits.js';
import { GgufValueType, type GgufValue, type GgufValueTypeInfo } from './types.js';

/** A parsed value with its stored type. */
export interface TypedValue {
  value: GgufValue;
  type: GgufValueTypeInfo;
}

/** Bytes of each fixed-size scalar value type (strings and arrays are variable). */
export const SCALAR_BYTES: Partial<Record<GgufValueType, number>> = {
  [GgufValueType.UINT8]: 1,
  [GgufValueType.INT8]: 1,
  [GgufValueType.UINT16]: 2,
  [GgufValueType.INT16]: 2,
  [GgufValueType.UINT32]: 4,
  [GgufValueType.INT32]: 4,
  [GgufValueType.FLOAT32]: 4,
  [GgufValueType.BOOL]: 1,
  [GgufValueType.UINT64]: 8,
  [GgufValueType.INT64]: 8,
  [GgufValueType.FLOAT64]: 8,
};

/** Smallest encoding of one value of `type` (for the file-size invariant), or undefined for an unknown type. */
function minValueBytes(type: number): number | undefined {
  if (type === GgufValueType.STRING) return MIN_BYTES.string;
  if (type === GgufValueType.ARRAY) return MIN_BYTES.array;
  return SCALAR_BYTES[type as GgufValueType];
}


/** Reads a GGUF string: u64 byte length, then UTF-8 bytes. */
export function readString(c: ByteCursor, field: string, limits: GgufLimits): string {
  const at = c.pos;
  const n = c.u64Bounded(`${field} length`, limits.maxStringLength, 'limit maxStringLength');
  if (n > c.remainingInFile) {
    throw invalid(`${field} length`, at, `string of ${n} bytes runs past the end of the file (${c.remainingInFile} bytes left)`, {
      value: n,
      remaining: c.remainingInFile,
    });
  }
  return c.utf8(n, field);
}

/** Fixed-size value types. */
type ScalarType = Exclude<GgufValueType, GgufValueType.STRING | GgufValueType.ARRAY>;

/** Element readers for arrays of fixed-size values (no per-element allocation beyond the value). */
const SCALAR_READERS: Record<ScalarType, (c: ByteCursor, field: string) => GgufValue> = {
  [GgufValueType.UINT8]: (c, f) => c.u8(f),
  [GgufValueType.INT8]: (c, f) => c.i8(f),
  [GgufValueType.UINT16]: (c, f) => c.u16(f),
  [GgufValueType.INT16]: (c, f) => c.i16(f),
  [GgufValueType.UINT32]: (c, f) => c.u32(f),
  [GgufValueType.INT32]: (c, f) => c.i32(f),
  [GgufValueType.FLOAT32]: (c, f) => c.f32(f),
  [GgufValueType.BOOL]: (c, f) => c.u8(f) !== 0,
  [GgufValueType.UINT64]: (c, f) => c.u64(f),
  [GgufValueType.INT64]: (c, f) => c.i64(f),
  [GgufValueType.FLOAT64]: (c, f) => c.f64(f),
};

/** Reads one value of stored `type` (read at `typeAt`), recursing into arrays up to `limits.maxArrayDepth`. */
export function readValue(c: ByteCursor, type: number, typeAt: number, field: string, depth: number, limits: GgufLimits): TypedValue {
  switch (type) {
    case GgufValueType.UINT8:
      return { value: c.u8(field), type: { type } };
    case GgufValueType.INT8:
      return { value: c.i8(field), type: { type } };
    case GgufValueType.UINT16:
      return { value: c.u16(field), type: { type } };
    case GgufValueType.INT16:
      return { value: c.i16(field), type: { type } };
    case GgufValueType.UINT32:
      return { value: c.u32(field), type: { type } };
    case GgufValueType.INT32:
      return { value: c.i32(field), type: { type } };
    case GgufValueType.FLOAT32:
      return { value: c.f32(field), type: { type } };
    case GgufValueType.BOOL:
      return { value: c.u8(field) !== 0, type: { type } };
    case GgufValueType.STRING:
      return { value: readString(c, field, limits), type: { type } };
    case GgufValueType.UINT64:
      return { value: c.u64(field), type: { type } };
    case GgufValueType.INT64:
      return { value: c.i64(field), type: { type } };
    case GgufValueType.FLOAT64:
      return { value: c.f64(field), type: { type } };
    case GgufValueType.ARRAY:
      return readArray(c, field, depth, limits);
    default:
      throw invalid(`type of ${field}`, typeAt, `unknown value type ${type} (valid: 0–12)`, { value: type });
  }
}

/** Reads an array: u32 element type, u64 length, elements. Length is checked against the file before allocating. */
function readArray(c: ByteCursor, field: string, depth: number, limits: GgufLimits): TypedValue {
  if (depth >= limits.maxArrayDepth) {
    throw invalid(field, c.pos, `arrays nested deeper than maxArrayDepth = ${limits.maxArrayDepth}`);
  }
  const elemAt = c.pos;
  const elemType = c.u32(`element type of ${field}`);
  const minBytes = minValueBytes(elemType);
  if (minBytes === undefined) {
    throw invalid(`element type of ${field}`, elemAt, `unknown value type ${elemType} (valid: 0–12)`, { value: elemType });
  }
  const lenAt = c.pos;
  const n = c.u64Bounded(`length of ${field}`, limits.maxArrayLength, 'limit maxArrayLength');
  checkCount(`length of ${field}`, lenAt, n, limits.maxArrayLength, 'maxArrayLength', minBytes, c.remainingInFile);
  const values: GgufValue[] = new Array<GgufValue>(n);
  let element: GgufValueTypeInfo | undefined;
  if (elemType === GgufValueType.ARRAY) {
    for (let i = 0; i < n; i++) {
      const at = c.pos;
      const item = readArray(c, field, depth + 1, limits);
      if (element !== undefined && !sameType(element, item.type)) {
        throw invalid(field, at, 'nested arrays have different element types; every inner array must share one type');
      }
      element = item.type;
      values[i] = item.value;
    }
    // An empty ARRAY-of-ARRAY stores no inner element type; UINT8 stands in for it.
    return { value: values, type: { type: GgufValueType.ARRAY, element: element ?? { type: GgufValueType.ARRAY, element: { type: GgufValueType.UINT8 } } } };
  }
  if (elemType === GgufValueType.STRING) {
    for (let i = 0; i < n; i++) values[i] = readString(c, field, limits);
  } else {
    const read = SCALAR_READERS[elemType as ScalarType];
    for (let i = 0; i < n; i++) values[i] = read(c, field);
  }
  return { value: values, type: { type: GgufValueType.ARRAY, element: { type: elemType as Exclude<GgufValueType, GgufValueType.ARRAY> } } };
}

/** Structural equality of two stored types. */
export function sameType(a: GgufValueTypeInfo, b: GgufValueTypeInfo): boolean {
  if (a.type !== b.type) return false;
  if (a.type === GgufValueType.ARRAY && b.type === GgufValueType.ARRAY) return sameType(a.element, b.element);
  return true;
}

