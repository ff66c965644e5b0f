/**
 * Typed reads of GGUF metadata for model configuration: `{arch}.…` keys with llama.cpp's defaults, and clear
 * `gguf-invalid` errors when a key is missing or has the wrong type. Architecture files use it through `config(meta)`.
 */

import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import { describeValue } from '../gguf/value-types.js';

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
    if (Array.isArray(v) && v.length > 0 && (typeof v[0] === 'number' || typeof v[0] === 'bigint')) {
      const first = Number(v[0]);
      if (v.every((x) => Number(x) === first)) return first;
      throw new LlmError('unsupported-arch', `reading model config: '${key}' varies per layer (${v.join(', ')}); per-layer values are not supported`, {
        details: { key },
      });
    }
    throw new LlmError('gguf-invalid', `reading model config: metadata key '${key}' should be a number, found ${describeValue(v)}`, {
      details: { key },
    });
  }

  /** A positive integer value, or `fallback`. */
  count(key: string, fallback?: number): number {
    const v = this.number(key, fallback);
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new LlmError('gguf-invalid', `reading model config: '${key}' should be a non-negative integer, found ${v}`, {
        details: { key, value: v },
      });
    }
    return v;
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

  /** An array of numbers (e.g. a per-layer pattern), or null when absent or scalar. */
  numberArray(key: string): number[] | null {
    if (!this.has(key)) return null;
    const v = this.meta[key];
    if (!Array.isArray(v)) return null;
    return v.map((x) => {
      if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') return Number(x);
      throw new LlmError('gguf-invalid', `reading model config: '${key}' should hold numbers, found ${describeValue(x)}`, {
        details: { key },
      });
    });
  }

  /** Length of an array value (e.g. `tokenizer.ggml.tokens`), or null. */
  arrayLength(key: string): number | null {
    const v = this.has(key) ? this.meta[key] : undefined;
    return Array.isArray(v) ? v.length : null;
  }
}
