/**
 * Metadata value types as data: naming them (`ARRAY<STRING>`), inferring a stored type from a JS value the way
 * gguf-py does, checking a value against a stored type before the writer encodes it, and describing a decoded value
 * for error messages.
 */

import { LlmError } from '../errors.js';
import { GgufValueType, type GgufNumericArray, type GgufValue, type GgufValueTypeInfo, isGgufArray } from './types.js';

/** A decoded value as error messages show it: `an array of 3`, `string llama`, `nothing` (at most 40 characters). */
export function describeValue(v: GgufValue | undefined): string {
  if (v === undefined) return 'nothing';
  if (isGgufArray(v)) return `an array of ${v.length}`;
  return `${typeof v} ${String(v).slice(0, 40)}`;
}

/** Inclusive integer range of each integer value type (64-bit ones as bigint). */
const INT_RANGES: Partial<Record<GgufValueType, readonly [bigint, bigint]>> = {
  [GgufValueType.UINT8]: [0n, 0xffn],
  [GgufValueType.INT8]: [-0x80n, 0x7fn],
  [GgufValueType.UINT16]: [0n, 0xffffn],
  [GgufValueType.INT16]: [-0x8000n, 0x7fffn],
  [GgufValueType.UINT32]: [0n, 0xffffffffn],
  [GgufValueType.INT32]: [-0x80000000n, 0x7fffffffn],
  [GgufValueType.UINT64]: [0n, 0xffffffffffffffffn],
  [GgufValueType.INT64]: [-0x8000000000000000n, 0x7fffffffffffffffn],
};

/** The same ranges as numbers (bounds beyond 2^53 round outward, which is harmless: numbers there are rejected). */
const NUM_RANGES: Partial<Record<GgufValueType, readonly [number, number]>> = Object.fromEntries(
  Object.entries(INT_RANGES).map(([k, [lo, hi]]) => [k, [Number(lo), Number(hi)]]),
);

/** `UINT32`, `STRING`, `ARRAY<ARRAY<INT32>>` … */
export function valueTypeName(type: GgufValueTypeInfo): string {
  return type.type === GgufValueType.ARRAY
    ? `ARRAY<${valueTypeName(type.element)}>`
    : (GgufValueType[type.type] ?? `type ${type.type}`);
}

/** Convenience constructors for stored types, e.g. `gguf.array(gguf.STRING)`. */
export const ggufType = Object.freeze({
  UINT8: { type: GgufValueType.UINT8 },
  INT8: { type: GgufValueType.INT8 },
  UINT16: { type: GgufValueType.UINT16 },
  INT16: { type: GgufValueType.INT16 },
  UINT32: { type: GgufValueType.UINT32 },
  INT32: { type: GgufValueType.INT32 },
  FLOAT32: { type: GgufValueType.FLOAT32 },
  BOOL: { type: GgufValueType.BOOL },
  STRING: { type: GgufValueType.STRING },
  UINT64: { type: GgufValueType.UINT64 },
  INT64: { type: GgufValueType.INT64 },
  FLOAT64: { type: GgufValueType.FLOAT64 },
  /** ARRAY of `element`. */
  array: (element: GgufValueTypeInfo): GgufValueTypeInfo => ({ type: GgufValueType.ARRAY, element }),
} satisfies Record<string, GgufValueTypeInfo | ((e: GgufValueTypeInfo) => GgufValueTypeInfo)>);

function inferError(field: string, what: string): LlmError {
  return new LlmError(
    'invalid-request',
    `writeGguf: cannot infer a GGUF type for ${field}: ${what}; give it in metadataTypes`,
    {
      details: { field },
    },
  );
}

/**
 * Infers a stored type from a JS value: boolean → BOOL, string → STRING, integer number → UINT32 (INT32 when
 * negative, FLOAT64 when outside 32 bits), other numbers → FLOAT32 (the GGUF convention; the value is rounded to f32),
 * bigint → INT64 (UINT64 above 2^63−1). Arrays follow gguf-py: integers → INT32 (UINT32 / FLOAT64 when they do not
 * fit), fractions → FLOAT32; an empty array is ARRAY<INT32>. Give an explicit type to get anything else.
 */
export function inferValueType(value: GgufValue, field = 'value'): GgufValueTypeInfo {
  switch (typeof value) {
    case 'boolean':
      return ggufType.BOOL;
    case 'string':
      return ggufType.STRING;
    case 'bigint':
      return value > 0x7fffffffffffffffn ? ggufType.UINT64 : ggufType.INT64;
    case 'number':
      if (!Number.isInteger(value) || Object.is(value, -0)) return ggufType.FLOAT32;
      if (value >= 0 && value <= 0xffffffff) return ggufType.UINT32;
      if (value < 0 && value >= -0x80000000) return ggufType.INT32;
      return ggufType.FLOAT64;
  }
  if (isGgufArray(value) && !Array.isArray(value)) return ggufType.array(typedArrayElement(value));
  if (!Array.isArray(value)) throw inferError(field, `unsupported JS value ${String(value)}`);
  return ggufType.array(inferElementType(value, field));
}

/** The element type a typed array stands for (a Uint8Array is UINT8; give BOOL explicitly for booleans). */
function typedArrayElement(v: GgufNumericArray): GgufValueTypeInfo {
  if (v instanceof Uint8Array) return ggufType.UINT8;
  if (v instanceof Int8Array) return ggufType.INT8;
  if (v instanceof Uint16Array) return ggufType.UINT16;
  if (v instanceof Int16Array) return ggufType.INT16;
  if (v instanceof Uint32Array) return ggufType.UINT32;
  if (v instanceof Int32Array) return ggufType.INT32;
  if (v instanceof Float32Array) return ggufType.FLOAT32;
  if (v instanceof Float64Array) return ggufType.FLOAT64;
  if (v instanceof BigUint64Array) return ggufType.UINT64;
  return ggufType.INT64;
}

/** GGUF stores little-endian; typed arrays use the host's order, which is little-endian on every current platform. */
export const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

type TypedArrayOf = new (buffer: ArrayBuffer, byteOffset: number, length: number) => GgufNumericArray;

/**
 * Element size and the typed array whose bytes are exactly the GGUF encoding of each fixed-size value type (on a
 * little-endian host; BOOL: a Uint8Array of 0/1). The parser reads arrays into these; the writer copies them as is.
 */
export const GGUF_TYPED_ARRAYS: Partial<Record<number, { readonly size: number; readonly of: TypedArrayOf }>> = {
  [GgufValueType.UINT8]: { size: 1, of: Uint8Array },
  [GgufValueType.INT8]: { size: 1, of: Int8Array },
  [GgufValueType.BOOL]: { size: 1, of: Uint8Array },
  [GgufValueType.UINT16]: { size: 2, of: Uint16Array },
  [GgufValueType.INT16]: { size: 2, of: Int16Array },
  [GgufValueType.UINT32]: { size: 4, of: Uint32Array },
  [GgufValueType.INT32]: { size: 4, of: Int32Array },
  [GgufValueType.FLOAT32]: { size: 4, of: Float32Array },
  [GgufValueType.UINT64]: { size: 8, of: BigUint64Array },
  [GgufValueType.INT64]: { size: 8, of: BigInt64Array },
  [GgufValueType.FLOAT64]: { size: 8, of: Float64Array },
};

/** Typed arrays each element type accepts as is (their range fits the type; BOOL takes 0/1 bytes). */
const TYPED_FOR: Partial<Record<GgufValueType, readonly (new (n: number) => GgufNumericArray)[]>> = {
  [GgufValueType.UINT8]: [Uint8Array],
  [GgufValueType.INT8]: [Int8Array],
  [GgufValueType.UINT16]: [Uint16Array, Uint8Array],
  [GgufValueType.INT16]: [Int16Array, Int8Array, Uint8Array],
  [GgufValueType.UINT32]: [Uint32Array, Uint16Array, Uint8Array],
  [GgufValueType.INT32]: [Int32Array, Int16Array, Uint16Array, Int8Array, Uint8Array],
  [GgufValueType.FLOAT32]: [Float32Array],
  [GgufValueType.FLOAT64]: [
    Float64Array,
    Float32Array,
    Int32Array,
    Uint32Array,
    Int16Array,
    Uint16Array,
    Int8Array,
    Uint8Array,
  ],
  [GgufValueType.BOOL]: [Uint8Array],
  [GgufValueType.UINT64]: [BigUint64Array],
  [GgufValueType.INT64]: [BigInt64Array],
};

function inferElementType(items: readonly GgufValue[], field: string): GgufValueTypeInfo {
  if (items.length === 0) return ggufType.INT32;
  const kinds = new Set(items.map((v) => (isGgufArray(v) ? 'array' : typeof v)));
  if (kinds.size !== 1) throw inferError(field, `array mixes ${[...kinds].join(' and ')}`);
  const first = items[0];
  if (typeof first === 'string') return ggufType.STRING;
  if (typeof first === 'boolean') return ggufType.BOOL;
  if (typeof first === 'bigint')
    return (items as bigint[]).some((v) => v > 0x7fffffffffffffffn) ? ggufType.UINT64 : ggufType.INT64;
  if (typeof first === 'number') {
    const nums = items as number[];
    if (nums.some((v) => !Number.isInteger(v) || Object.is(v, -0))) return ggufType.FLOAT32;
    if (nums.every((v) => v >= -0x80000000 && v <= 0x7fffffff)) return ggufType.INT32;
    if (nums.every((v) => v >= 0 && v <= 0xffffffff)) return ggufType.UINT32;
    return ggufType.FLOAT64;
  }
  const inner = items.map((v) =>
    Array.isArray(v) ? inferElementType(v, field) : typedArrayElement(v as GgufNumericArray),
  );
  const name = valueTypeName(inner[0]);
  if (inner.some((t) => valueTypeName(t) !== name))
    throw inferError(field, 'nested arrays have different element types');
  return ggufType.array(inner[0]);
}

/**
 * Throws `LlmError('invalid-request')` naming `field` unless `value` can be stored as `type`: integers in range
 * (64-bit types take bigint or a safe-integer number), numbers for floats, booleans, strings, arrays element-wise.
 */
export function checkValue(value: GgufValue, type: GgufValueTypeInfo, field: string): void {
  const reason = valueProblem(value, type);
  if (reason === undefined) return;
  // Slow path only on failure: find the offending element to name it.
  if (type.type === GgufValueType.ARRAY && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkValue(value[i], type.element, `${field}[${i}]`);
  }
  throw new LlmError('invalid-request', `writeGguf: ${field} cannot be stored as ${valueTypeName(type)}: ${reason}`, {
    details: { field, type: valueTypeName(type) },
  });
}

/** Why `value` cannot be stored as `type`, or undefined when it can. Allocates nothing on success. */
function valueProblem(value: GgufValue, type: GgufValueTypeInfo): string | undefined {
  const range = INT_RANGES[type.type];
  if (range !== undefined) {
    const is64 = type.type === GgufValueType.UINT64 || type.type === GgufValueType.INT64;
    if (typeof value === 'bigint') {
      if (!is64) return 'bigint is only valid for UINT64/INT64';
      return value < range[0] || value > range[1] ? `${value} is outside ${range[0]}..${range[1]}` : undefined;
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) return `${String(value)} is not an integer`;
    const [lo, hi] = NUM_RANGES[type.type]!;
    return value < lo || value > hi ? `${value} is outside ${range[0]}..${range[1]}` : undefined;
  }
  switch (type.type) {
    case GgufValueType.FLOAT32:
    case GgufValueType.FLOAT64:
      return typeof value !== 'number' ? `${typeof value} is not a number` : undefined;
    case GgufValueType.BOOL:
      return typeof value !== 'boolean' ? `${typeof value} is not a boolean` : undefined;
    case GgufValueType.STRING:
      return typeof value !== 'string' ? `${typeof value} is not a string` : undefined;
    case GgufValueType.ARRAY:
      if (isGgufArray(value) && !Array.isArray(value)) {
        const ok = TYPED_FOR[type.element.type]?.some((C) => value instanceof C) ?? false;
        if (!ok) return `a ${value.constructor.name} cannot hold ${valueTypeName(type.element)} elements`;
        if (type.element.type === GgufValueType.BOOL && (value as Uint8Array).some((x) => x > 1))
          return 'BOOL elements must be 0 or 1';
        return undefined;
      }
      if (!Array.isArray(value)) return `${typeof value} is not an array`;
      for (const item of value) {
        const problem = valueProblem(item, type.element);
        if (problem !== undefined) return problem;
      }
      return undefined;
    default:
      return `unknown value type ${String((type as { type: unknown }).type)}`;
  }
}
