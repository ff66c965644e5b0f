/**
 * Typed, validated reads of `tokenizer.*` metadata values through the one metadata reader (`gguf/metadata-reader.ts`)
 * with the tokenizer's error code: a wrong type is `LlmError('tokenizer')` naming the key, what was found and what to do.
 */

import { type MetadataErrors, MetadataReader } from '../gguf/metadata-reader.js';
import type { GgufValue } from '../gguf/types.js';

/** Plain GGUF metadata as the tokenizer receives it. */
export type TokenizerMetadata = Readonly<Record<string, GgufValue>>;

const TOKENIZER_ERRORS: MetadataErrors = {
  code: 'tokenizer',
  context: 'reading tokenizer metadata',
  hint: "; the GGUF file's vocabulary is malformed, re-convert it",
};

const reader = (meta: TokenizerMetadata): MetadataReader => new MetadataReader(meta, TOKENIZER_ERRORS);

/** A string value, or `undefined` when the key is absent. */
export const readString = (meta: TokenizerMetadata, key: string): string | undefined =>
  reader(meta).optionalString(key);

/** A boolean value (integers 0/1 accepted), or `undefined` when absent. */
export const readBool = (meta: TokenizerMetadata, key: string): boolean | undefined => reader(meta).optionalBool(key);

/** A non-negative integer (number or bigint), or `undefined` when absent. Values beyond 2^53 become `Infinity`. */
export const readUint = (meta: TokenizerMetadata, key: string): number | undefined => reader(meta).optionalUint(key);

/** An array of strings, or `undefined` when absent. */
export const readStringArray = (meta: TokenizerMetadata, key: string): readonly string[] | undefined =>
  reader(meta).optionalStringArray(key);

/** An array of numbers (f32 scores or i32 types), or `undefined` when absent; typed arrays are returned without a copy. */
export const readNumberArray = (meta: TokenizerMetadata, key: string): ArrayLike<number> | undefined =>
  reader(meta).optionalNumbers(key);
