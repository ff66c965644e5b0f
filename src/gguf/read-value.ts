/**
 * Decoding of GGUF metadata values (gguf_type 0–12): scalars, length-prefixed UTF-8 strings and arrays, nested up
 * to a depth limit. Every length is checked against the bytes left in the file before anything is allocated.
 * Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md ("Standardized key-value pairs", `gguf_value_t`).
 *
 * The readers are generators driven by `parseGguf`: where bytes are not loaded yet they yield the absolute offset
 * they need (the driver loads up to it and resumes them — nothing is re-read), and inside long arrays they yield
 * `TICK` so the driver can check the abort signal and let the event loop run. Parsing is linear in the header size.
 */

import { type ByteCursor, GGUF_UTF8 } from './byte-cursor.js';
import { type GgufLimits, MIN_BYTES, checkCount, invalid } from './limits.js';
import { decodeStringRun } from './string-run.js';
import { GgufValueType, type GgufValue, type GgufValueTypeInfo } from './types.js';

/** A parsed value with its stored type. */
export interface TypedValue {
  value: GgufValue;
  type: GgufValueTypeInfo;
}

/** Yielded inside long loops: "check for abort, maybe yield to the event loop". Any other yield is an offset to load. */
export const TICK = -1;

/** What the readers yield: `TICK`, or the absolute end offset (exclusive) that must be loaded before they resume. */
export type ReadStep = Generator<number, void, void>;

/** Elements read between two `TICK`s in long arrays. */
const TICK_EVERY = 1 << 16;

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

/**
 * Makes `n` bytes at the cursor readable: a truncation error (naming `field`) when the file ends first, otherwise
 * yields the needed end offset until the driver has loaded it.
 */
export function* ensure(c: ByteCursor, n: number, field: string): ReadStep {
  if (c.pos + n > c.fileSize) c.require(n, field); // throws the truncation error
  while (!c.has(n)) yield c.pos + n;
}

/** Reads a string's u64 length and checks it against the limit and the file. */
function stringLength(c: ByteCursor, field: string, limits: GgufLimits): number {
  const at = c.pos;
  const n = c.u64Bounded(`${field} length`, limits.maxStringLength, 'limit maxStringLength');
  if (n > c.remainingInFile) {
    throw invalid(
      `${field} length`,
      at,
      `string of ${n} bytes runs past the end of the file (${c.remainingInFile} bytes left)`,
      {
        value: n,
        remaining: c.remainingInFile,
      },
    );
  }
  return n;
}

/** Reads a GGUF string (u64 byte length, then UTF-8 bytes), waiting for bytes as needed; the string is the return value. */
export function* readString(c: ByteCursor, field: string, limits: GgufLimits): Generator<number, string, void> {
  yield* ensure(c, 8, `${field} length`);
  const n = stringLength(c, field, limits);
  yield* ensure(c, n, field);
  return c.utf8(n, field);
}

/** The lengths of the run being gathered by `loadedStrings` (one array reused: a parse runs synchronously). */
const RUN_LENGTHS: number[] = [];

/**
 * Reads the wholly loaded strings at the cursor into `out[from…]`, stopping before `end` or the first string not
 * loaded yet (the cursor is left at it); returns how many were read. Runs of strings (each after the first shorter
 * than 128 bytes) are decoded with one call where valid (string-run.ts), else one by one, as `ByteCursor.utf8` does.
 */
function loadedStrings(
  c: ByteCursor,
  field: string,
  limits: GgufLimits,
  out: string[],
  from: number,
  end: number,
): number {
  const lengths = RUN_LENGTHS; // of the run's strings, stored back to back from `runStart`
  lengths.length = 0;
  let runStart = 0;
  const flush = (at: number) => {
    if (lengths.length > 0 && !decodeStringRun(c.bytes, runStart, lengths, out, at)) {
      for (let k = 0, p = runStart; k < lengths.length; p += lengths[k] + 8, k++)
        out[at + k] = GGUF_UTF8.decode(c.bytes.subarray(p, p + lengths[k]));
    }
    lengths.length = 0;
  };
  let i = from;
  while (i < end && c.has(8)) {
    const at = c.pos;
    const n = stringLength(c, field, limits);
    if (!c.has(n)) {
      c.pos = at;
      break;
    }
    if (n >= 128) flush(i - lengths.length); // its length prefix is not ASCII: it starts a new run
    if (lengths.length === 0) runStart = c.pos;
    lengths.push(n);
    c.pos += n; // loaded (checked above): decoded with its run
    i++;
  }
  flush(i - lengths.length);
  return i - from;
}

/** Reads one fixed-size scalar of `type` (bytes already ensured). */
function readScalar(c: ByteCursor, type: GgufValueType, field: string): GgufValue {
  switch (type) {
    case GgufValueType.UINT8:
      return c.u8(field);
    case GgufValueType.INT8:
      return c.i8(field);
    case GgufValueType.UINT16:
      return c.u16(field);
    case GgufValueType.INT16:
      return c.i16(field);
    case GgufValueType.UINT32:
      return c.u32(field);
    case GgufValueType.INT32:
      return c.i32(field);
    case GgufValueType.FLOAT32:
      return c.f32(field);
    case GgufValueType.BOOL:
      return c.u8(field) !== 0;
    case GgufValueType.UINT64:
      return c.u64(field);
    case GgufValueType.INT64:
      return c.i64(field);
    default:
      return c.f64(field);
  }
}

/** Reads one value of stored `type` (read at `typeAt`), recursing into arrays up to `limits.maxArrayDepth`. */
export function* readValue(
  c: ByteCursor,
  type: number,
  typeAt: number,
  field: string,
  depth: number,
  limits: GgufLimits,
): Generator<number, TypedValue, void> {
  if (type === GgufValueType.STRING) return { value: yield* readString(c, field, limits), type: { type } };
  if (type === GgufValueType.ARRAY) return yield* readArray(c, field, depth, limits);
  const size = SCALAR_BYTES[type as GgufValueType];
  if (size === undefined)
    throw invalid(`type of ${field}`, typeAt, `unknown value type ${type} (valid: 0–12)`, { value: type });
  yield* ensure(c, size, field);
  return {
    value: readScalar(c, type as GgufValueType, field),
    type: { type: type as Exclude<GgufValueType, GgufValueType.ARRAY> },
  };
}

/**
 * Reads an array: u32 element type, u64 length, elements. The length is checked against the limit and the file
 * before anything is allocated; fixed-size elements are read as one typed array once `count × size` bytes are loaded.
 */
function* readArray(
  c: ByteCursor,
  field: string,
  depth: number,
  limits: GgufLimits,
): Generator<number, TypedValue, void> {
  if (depth >= limits.maxArrayDepth) {
    throw invalid(field, c.pos, `arrays nested deeper than maxArrayDepth = ${limits.maxArrayDepth}`);
  }
  yield* ensure(c, 12, `element type and length of ${field}`);
  const elemAt = c.pos;
  const elemType = c.u32(`element type of ${field}`);
  const minBytes = minValueBytes(elemType);
  if (minBytes === undefined) {
    throw invalid(`element type of ${field}`, elemAt, `unknown value type ${elemType} (valid: 0–12)`, {
      value: elemType,
    });
  }
  const lenAt = c.pos;
  const n = c.u64Bounded(`length of ${field}`, limits.maxArrayLength, 'limit maxArrayLength');
  checkCount(`length of ${field}`, lenAt, n, limits.maxArrayLength, 'maxArrayLength', minBytes, c.remainingInFile);
  if (elemType === GgufValueType.ARRAY) {
    const values = new Array<GgufValue>(n);
    let element: GgufValueTypeInfo | undefined;
    for (let i = 0; i < n; i++) {
      if (i % TICK_EVERY === TICK_EVERY - 1) yield TICK;
      const at = c.pos;
      const item = yield* readArray(c, field, depth + 1, limits);
      if (element !== undefined && !sameType(element, item.type)) {
        throw invalid(field, at, 'nested arrays have different element types; every inner array must share one type');
      }
      element = item.type;
      values[i] = item.value;
    }
    // An empty ARRAY-of-ARRAY stores no inner element type; UINT8 stands in for it.
    return {
      value: values,
      type: {
        type: GgufValueType.ARRAY,
        element: element ?? { type: GgufValueType.ARRAY, element: { type: GgufValueType.UINT8 } },
      },
    };
  }
  if (elemType === GgufValueType.STRING) {
    const values = new Array<string>(n);
    for (let i = 0; i < n; ) {
      if (i % TICK_EVERY === TICK_EVERY - 1) yield TICK;
      // Strings already loaded are decoded in runs (string-run.ts), up to the next TICK; else one, waiting for bytes.
      const got = loadedStrings(
        c,
        field,
        limits,
        values,
        i,
        Math.min(n, (Math.floor(i / TICK_EVERY) + 1) * TICK_EVERY - 1),
      );
      if (got > 0) i += got;
      else values[i++] = yield* readString(c, field, limits);
    }
    return { value: values, type: { type: GgufValueType.ARRAY, element: { type: GgufValueType.STRING } } };
  }
  // Fixed-size elements: the byte count is known, so wait for all of it once and copy it as a typed array.
  yield* ensure(c, n * minBytes, field);
  const value = c.typedArray(elemType, n, field);
  return {
    value,
    type: { type: GgufValueType.ARRAY, element: { type: elemType as Exclude<GgufValueType, GgufValueType.ARRAY> } },
  };
}

/** Structural equality of two stored types. */
function sameType(a: GgufValueTypeInfo, b: GgufValueTypeInfo): boolean {
  if (a.type !== b.type) return false;
  if (a.type === GgufValueType.ARRAY && b.type === GgufValueType.ARRAY) return sameType(a.element, b.element);
  return true;
}
