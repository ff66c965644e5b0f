/**
 * Typed, validated reads of `tokenizer.*` metadata values. The tokenizer takes plain metadata (not a GGUF file), so
 * every value is checked here: a wrong type is `LlmError('tokenizer')` naming the key, what was found and what to do.
 */

import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import { describeValue } from '../gguf/value-types.js';

/** Plain GGUF metadata as the tokenizer receives it. */
export type TokenizerMetadata = Readonly<Record<string, GgufValue>>;

function bad(key: string, want: string, got: GgufValue | undefined): LlmError {
  return new LlmError(
    'tokenizer',
    `reading tokenizer metadata: '${key}' should be ${want} but is ${describeValue(got)}; the GGUF file's vocabulary is malformed, re-convert it`,
    { details: { key, want } },
  );
}

function own(meta: TokenizerMetadata, key: string): GgufValue | undefined {
  return Object.prototype.hasOwnProperty.call(meta, key) ? meta[key] : undefined;
}

/** A string value, or `undefined` when the key is absent. */
export function readString(meta: TokenizerMetadata, key: string): string | undefined {
  const v = own(meta, key);
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw bad(key, 'a string', v);
  return v;
}

/** A boolean value (integers 0/1 accepted), or `undefined` when absent. */
export function readBool(meta: TokenizerMetadata, key: string): boolean | undefined {
  const v = own(meta, key);
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v) !== 0;
  throw bad(key, 'a boolean', v);
}

/** A non-negative integer (number or bigint), or `undefined` when absent. Values beyond 2^53 become `Infinity`. */
export function readUint(meta: TokenizerMetadata, key: string): number | undefined {
  const v = own(meta, key);
  if (v === undefined) return undefined;
  if (typeof v === 'bigint') return v < 0n ? -1 : v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw bad(key, 'an integer', v);
}

/** An array of strings, or `undefined` when absent. */
export function readStringArray(meta: TokenizerMetadata, key: string): readonly string[] | undefined {
  const v = own(meta, key);
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw bad(key, 'an array of strings', v);
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') throw bad(`${key}[${i}]`, 'a string', v[i]);
  }
  return v as string[];
}

/**
 * An array of numbers (f32 scores or i32 types), or `undefined` when absent. The parser gives typed arrays (returned
 * as they are, no copy); JS arrays of numbers or bigints are accepted too.
 */
export function readNumberArray(meta: TokenizerMetadata, key: string): ArrayLike<number> | undefined {
  const v = own(meta, key);
  if (v === undefined) return undefined;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) return Array.from(v, Number);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return v as ArrayLike<number>;
  if (!Array.isArray(v)) throw bad(key, 'an array of numbers', v);
  let hasBigint = false;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x === 'bigint') hasBigint = true;
    else if (typeof x !== 'number') throw bad(`${key}[${i}]`, 'a number', x);
  }
  if (hasBigint) return v.map((x) => Number(x));
  return v as number[];
}
