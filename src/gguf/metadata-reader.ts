/**
 * The one typed reader of GGUF metadata values (model config, tokenizer): typed, bounded reads with defaults, and
 * every wrong value an `LlmError` with the error code and context the caller gives (`gguf-invalid` for the model
 * config, `tokenizer` for the vocabulary) naming the key and what was found.
 */

import { type ErrorCode, LlmError } from '../errors.js';
import type { GgufValue } from './types.js';
import { describeValue } from './value-types.js';

/** How a reader reports a bad value: the error code, the message prefix, and an optional closing hint. */
export interface MetadataErrors {
  readonly code: ErrorCode;
  /** What is being read, e.g. 'reading model config'. */
  readonly context: string;
  /** Appended to type errors, e.g. '; re-convert the file'. */
  readonly hint?: string;
}

/** A metadata array as decoded: a JS array (strings, nested arrays) or a typed array (numbers, booleans as 0/1). */
type MetadataArray = ArrayLike<unknown> & { readonly length: number };

/** True for a metadata value that is an array of any kind (JS array or typed array). */
function isArrayValue(v: unknown): v is MetadataArray {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

/** The first few entries of an array, for messages (hostile arrays can hold millions). */
function preview(v: MetadataArray, max = 8): string {
  const shown: string[] = [];
  for (let i = 0; i < Math.min(v.length, max); i++) shown.push(String(v[i]));
  return v.length > max ? `${shown.join(', ')}, … (${v.length} entries)` : shown.join(', ');
}

/** Reads metadata values of one file, prefixing `{arch}.` where asked. */
export class MetadataReader {
  constructor(
    readonly meta: Readonly<Record<string, GgufValue>>,
    private readonly errors: MetadataErrors,
    /** `general.architecture`, used as the prefix of architecture keys. */
    readonly arch = '',
  ) {}

  /** The error for a bad value of `key` (code and context of this reader). */
  private fail(message: string, details: Record<string, string | number>): LlmError {
    return new LlmError(this.errors.code, `${this.errors.context}: ${message}`, { details });
  }

  /** The error for a value of `key` that is not `want`. */
  private wrongType(key: string, want: string, got: GgufValue | undefined): LlmError {
    return this.fail(`'${key}' should be ${want} but is ${describeValue(got)}${this.errors.hint ?? ''}`, { key, want });
  }

  /** The value of `key`, or undefined when absent (own keys only). */
  private own(key: string): GgufValue | undefined {
    return this.has(key) ? this.meta[key] : undefined;
  }

  /** The full key of an architecture key: `archKey('block_count')` → `llama.block_count`. */
  archKey(suffix: string): string {
    return `${this.arch}.${suffix}`;
  }

  /** True when `key` (full) is present. */
  has(key: string): boolean {
    return Object.hasOwn(this.meta, key);
  }

  /** A numeric value (integer or float; 64-bit integers converted), or `fallback` when absent. */
  number(key: string, fallback?: number): number {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw this.fail(`metadata key '${key}' is missing; the file cannot be run without it`, { key });
    }
    const v = this.meta[key];
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    // llama.cpp's get_key_or_arr accepts an array of one value per layer; a uniform array reads as its first entry.
    if (isArrayValue(v) && v.length > 0 && (typeof v[0] === 'number' || typeof v[0] === 'bigint')) {
      const first = Number(v[0]);
      for (let i = 1; i < v.length; i++) {
        if (Number(v[i]) !== first) {
          throw new LlmError(
            'unsupported-arch',
            `${this.errors.context}: '${key}' varies per layer (${preview(v)}); per-layer values are not supported`,
            {
              details: { key },
            },
          );
        }
      }
      return first;
    }
    throw this.wrongType(key, 'a number', v);
  }

  /**
   * A finite number within [min, max] (`exclusiveMin`: strictly above min), or `fallback` when absent. NaN, ±Inf and
   * out-of-range values are `gguf-invalid` naming the key, the value and `why` (what the value feeds).
   */
  finite(
    key: string,
    fallback: number | undefined,
    range: { min?: number; exclusiveMin?: boolean; max?: number },
    why: string,
  ): number {
    const v = this.number(key, fallback);
    const { min = -Infinity, exclusiveMin = false, max = Infinity } = range;
    if (!Number.isFinite(v) || v < min || (exclusiveMin && v === min) || v > max) {
      const want = `${exclusiveMin ? '>' : '≥'} ${min}${max !== Infinity ? ` and ≤ ${max}` : ''}`;
      throw this.fail(`'${key}' is ${v}; it must be a finite number ${want} (${why}); the model file is broken`, {
        key,
        value: String(v),
      });
    }
    return v;
  }

  /** A non-negative integer value, or `fallback`. */
  count(key: string, fallback?: number): number {
    const raw = this.has(key) ? this.meta[key] : undefined;
    if (typeof raw === 'bigint' && (raw < 0n || raw > BigInt(Number.MAX_SAFE_INTEGER))) {
      throw this.fail(`'${key}' is ${raw}, not a count this runtime can hold; the model file is corrupt or hostile`, {
        key,
        value: raw.toString(),
      });
    }
    const v = this.number(key, fallback);
    if (!Number.isSafeInteger(v) || v < 0) {
      throw this.fail(`'${key}' should be a non-negative integer, found ${v}`, { key, value: String(v) });
    }
    return v;
  }

  /**
   * A count in [min, max], or `fallback` when absent: `gguf-invalid` naming the key, its value and the named limit
   * otherwise. Use it for every count that sizes an allocation, so a hostile file cannot make one huge.
   */
  boundedCount(key: string, fallback: number | undefined, min: number, max: number, limitName: string): number {
    const v = this.count(key, fallback);
    if (v < min || v > max) {
      const why = v < min ? `below the minimum ${min}` : `above the limit ${limitName} = ${max}`;
      throw this.fail(`'${key}' is ${v}, ${why}; the model file is corrupt or hostile`, {
        key,
        value: v,
        limit: v < min ? min : max,
      });
    }
    return v;
  }

  /**
   * A count per layer: an array of `nLayers` entries (llama.cpp `get_key_or_arr`) or one value for every layer,
   * each in [min, max] (`gguf-invalid` naming the key, the layer and the limit otherwise).
   */
  boundedCounts(
    key: string,
    fallback: number | undefined,
    nLayers: number,
    min: number,
    max: number,
    limitName: string,
  ): number[] {
    const values = this.numberArray(key, nLayers);
    if (values === null) return new Array<number>(nLayers).fill(this.boundedCount(key, fallback, min, max, limitName));
    for (let il = 0; il < values.length; il++) {
      const v = values[il];
      if (!Number.isSafeInteger(v) || v < min || v > max) {
        const why = !Number.isSafeInteger(v)
          ? 'not an integer'
          : v < min
            ? `below the minimum ${min}`
            : `above the limit ${limitName} = ${max}`;
        throw this.fail(`'${key}' is ${v} for layer ${il}, ${why}; the model file is corrupt or hostile`, {
          key,
          layer: il,
          value: v,
        });
      }
    }
    return values;
  }

  /** A string value, or `fallback` when absent. */
  string(key: string, fallback?: string): string {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw this.fail(`metadata key '${key}' is missing`, { key });
    }
    const v = this.meta[key];
    if (typeof v !== 'string') {
      throw this.wrongType(key, 'a string', v);
    }
    return v;
  }

  /**
   * An array of numbers (e.g. a per-layer pattern; booleans read as 0/1), or null when absent or scalar. When
   * `expectedLength` is given, any other length is `gguf-invalid` — checked before anything is copied.
   */
  numberArray(key: string, expectedLength?: number): number[] | null {
    if (!this.has(key)) return null;
    const v = this.meta[key];
    if (!isArrayValue(v)) return null;
    if (expectedLength !== undefined && v.length !== expectedLength) {
      throw this.fail(`'${key}' has ${v.length} entries, expected one per layer (${expectedLength})`, {
        key,
        entries: v.length,
        expected: expectedLength,
      });
    }
    const out = new Array<number>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== 'number' && typeof x !== 'bigint' && typeof x !== 'boolean') {
        throw this.wrongType(`${key}[${i}]`, 'a number', x as GgufValue);
      }
      out[i] = Number(x);
    }
    return out;
  }

  /** Length of an array value (e.g. `tokenizer.ggml.tokens`), or null. */
  arrayLength(key: string): number | null {
    const v = this.has(key) ? this.meta[key] : undefined;
    return isArrayValue(v) ? v.length : null;
  }

  /** A string, or undefined when absent. */
  optionalString(key: string): string | undefined {
    const v = this.own(key);
    if (v === undefined || typeof v === 'string') return v;
    throw this.wrongType(key, 'a string', v);
  }

  /** A boolean (integers 0/1 accepted), or undefined when absent. */
  optionalBool(key: string): boolean | undefined {
    const v = this.own(key);
    if (v === undefined || typeof v === 'boolean') return v;
    if (typeof v === 'number' || typeof v === 'bigint') return Number(v) !== 0;
    throw this.wrongType(key, 'a boolean', v);
  }

  /** A non-negative integer (number or bigint), or undefined when absent; beyond 2^53 it is `Infinity`, below 0 −1. */
  optionalUint(key: string): number | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v === 'bigint') return v < 0n ? -1 : v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    throw this.wrongType(key, 'an integer', v);
  }

  /** An array of strings, or undefined when absent. */
  optionalStringArray(key: string): readonly string[] | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw this.wrongType(key, 'an array of strings', v);
    for (let i = 0; i < v.length; i++) {
      if (typeof v[i] !== 'string') throw this.wrongType(`${key}[${i}]`, 'a string', v[i] as GgufValue);
    }
    return v as string[];
  }

  /**
   * An array of numbers, or undefined when absent: typed arrays as they are (no copy), 64-bit ones and JS arrays of
   * numbers or bigints converted.
   */
  optionalNumbers(key: string): ArrayLike<number> | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (v instanceof BigInt64Array || v instanceof BigUint64Array) return Array.from(v, Number);
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return v as ArrayLike<number>;
    if (!Array.isArray(v)) throw this.wrongType(key, 'an array of numbers', v);
    let hasBigint = false;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'bigint') hasBigint = true;
      else if (typeof x !== 'number') throw this.wrongType(`${key}[${i}]`, 'a number', x as GgufValue);
    }
    return hasBigint ? v.map((x) => Number(x)) : (v as number[]);
  }
}
