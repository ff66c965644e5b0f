/**
 * Typed reads of GGUF metadata for model configuration: `{arch}.…` keys with llama.cpp's defaults, and clear
 * `gguf-invalid` errors when a key is missing or has the wrong type. Architecture files use it through `config(meta)`.
 */

import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import { describeValue } from '../gguf/value-types.js';

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

/** Reads metadata values of one model file, prefixing `{arch}.` where asked. */
export class MetadataReader {
  constructor(
    readonly meta: Readonly<Record<string, GgufValue>>,
    /** `general.architecture`, used as the prefix of architecture keys. */
    readonly arch: string,
  ) {}

  /** The full key of an architecture key: `archKey('block_count')` → `llama.block_count`. */
  archKey(suffix: string): string {
    return `${this.arch}.${suffix}`;
  }

  /** True when `key` (full) is present. */
  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.meta, key);
  }

  /** A numeric value (integer or float; 64-bit integers converted), or `fallback` when absent. */
  number(key: string, fallback?: number): number {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw new LlmError('gguf-invalid', `reading model config: metadata key '${key}' is missing; the file cannot be run without it`, {
        details: { key },
      });
    }
    const v = this.meta[key];
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    // llama.cpp's get_key_or_arr accepts an array of one value per layer; a uniform array reads as its first entry.
    if (isArrayValue(v) && v.length > 0 && (typeof v[0] === 'number' || typeof v[0] === 'bigint')) {
      const first = Number(v[0]);
      for (let i = 1; i < v.length; i++) {
        if (Number(v[i]) !== first) {
          throw new LlmError('unsupported-arch', `reading model config: '${key}' varies per layer (${preview(v)}); per-layer values are not supported`, {
            details: { key },
          });
        }
      }
      return first;
    }
    throw new LlmError('gguf-invalid', `reading model config: metadata key '${key}' should be a number, found ${describeValue(v)}`, {
      details: { key },
    });
  }

  /**
   * A finite number within [min, max] (`exclusiveMin`: strictly above min), or `fallback` when absent. NaN, ±Inf and
   * out-of-range values are `gguf-invalid` naming the key, the value and `why` (what the value feeds).
   */
  finite(key: string, fallback: number | undefined, range: { min?: number; exclusiveMin?: boolean; max?: number }, why: string): number {
    const v = this.number(key, fallback);
    const { min = -Infinity, exclusiveMin = false, max = Infinity } = range;
    if (!Number.isFinite(v) || v < min || (exclusiveMin && v === min) || v > max) {
      const want = `${exclusiveMin ? '>' : '≥'} ${min}${max !== Infinity ? ` and ≤ ${max}` : ''}`;
      throw new LlmError('gguf-invalid', `reading model config: '${key}' is ${v}; it must be a finite number ${want} (${why}); the model file is broken`, {
        details: { key, value: String(v) },
      });
    }
    return v;
  }

  /** A non-negative integer value, or `fallback`. */
  count(key: string, fallback?: number): number {
    const raw = this.has(key) ? this.meta[key] : undefined;
    if (typeof raw === 'bigint' && (raw < 0n || raw > BigInt(Number.MAX_SAFE_INTEGER))) {
      throw new LlmError('gguf-invalid', `reading model config: '${key}' is ${raw}, not a count this runtime can hold; the model file is corrupt or hostile`, {
        details: { key, value: raw.toString() },
      });
    }
    const v = this.number(key, fallback);
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new LlmError('gguf-invalid', `reading model config: '${key}' should be a non-negative integer, found ${v}`, {
        details: { key, value: String(v) },
      });
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
      throw new LlmError('gguf-invalid', `reading model config: '${key}' is ${v}, ${why}; the model file is corrupt or hostile`, {
        details: { key, value: v, limit: v < min ? min : max },
      });
    }
    return v;
  }

  /**
   * A count per layer: an array of `nLayers` entries (llama.cpp `get_key_or_arr`) or one value for every layer,
   * each in [min, max] (`gguf-invalid` naming the key, the layer and the limit otherwise).
   */
  boundedCounts(key: string, fallback: number | undefined, nLayers: number, min: number, max: number, limitName: string): number[] {
    const values = this.numberArray(key, nLayers);
    if (values === null) return new Array<number>(nLayers).fill(this.boundedCount(key, fallback, min, max, limitName));
    for (let il = 0; il < values.length; il++) {
      const v = values[il];
      if (!Number.isSafeInteger(v) || v < min || v > max) {
        const why = !Number.isSafeInteger(v) ? 'not an integer' : v < min ? `below the minimum ${min}` : `above the limit ${limitName} = ${max}`;
        throw new LlmError('gguf-invalid', `reading model config: '${key}' is ${v} for layer ${il}, ${why}; the model file is corrupt or hostile`, {
          details: { key, layer: il, value: v },
        });
      }
    }
    return values;
  }

  /** A string value, or `fallback` when absent. */
  string(key: string, fallback?: string): string {
    if (!this.has(key)) {
      if (fallback !== undefined) return fallback;
      throw new LlmError('gguf-invalid', `reading model config: metadata key '${key}' is missing`, { details: { key } });
    }
    const v = this.meta[key];
    if (typeof v !== 'string') {
      throw new LlmError('gguf-invalid', `reading model config: '${key}' should be a string, found ${describeValue(v)}`, {
        details: { key },
      });
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
      throw new LlmError('gguf-invalid', `reading model config: '${key}' has ${v.length} entries, expected one per layer (${expectedLength})`, {
        details: { key, entries: v.length, expected: expectedLength },
      });
    }
    const out = new Array<number>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== 'number' && typeof x !== 'bigint' && typeof x !== 'boolean') {
        throw new LlmError('gguf-invalid', `reading model config: '${key}' should hold numbers, found ${describeValue(x as GgufValue)}`, {
          details: { key },
        });
      }
      out[i] = Number(x);
    }
    return out;
  }

  /** When `key` holds an array, throws `gguf-invalid` unless it has `expected` entries (a per-layer array). */
  numberArrayLength(key: string, expected: number): void {
    const n = this.arrayLength(key);
    if (n !== null && n !== expected) {
      throw new LlmError('gguf-invalid', `reading model config: '${key}' has ${n} entries, expected one per layer (${expected})`, {
        details: { key, entries: n, expected },
      });
    }
  }

  /** Length of an array value (e.g. `tokenizer.ggml.tokens`), or null. */
  arrayLength(key: string): number | null {
    const v = this.has(key) ? this.meta[key] : undefined;
    return isArrayValue(v) ? v.length : null;
  }
}
