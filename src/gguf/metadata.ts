/**
 * Typed access to GGUF metadata: well-known keys as template-literal types (`${arch}.context_length`), getters that
 * check the stored type and name the key on failure, and `archKey` for the architecture-prefixed hyper-parameters.
 * Key names follow llama.cpp (src/llama-arch.cpp `LLM_KV_NAMES`) and the GGUF spec's standardized key-value pairs.
 */

import { LlmError } from '../errors.js';
import { valueTypeName } from './value-types.js';
import { type GgufFile, type GgufNumericArray, type GgufValue, isGgufArray } from './types.js';

/** Hyper-parameter suffixes stored under `{general.architecture}.` (GGUF spec, llama-arch.cpp). */
export type ArchKeySuffix =
  | 'context_length'
  | 'embedding_length'
  | 'block_count'
  | 'feed_forward_length'
  | 'vocab_size'
  | 'expert_count'
  | 'expert_used_count'
  | 'attention.head_count'
  | 'attention.head_count_kv'
  | 'attention.key_length'
  | 'attention.value_length'
  | 'attention.layer_norm_epsilon'
  | 'attention.layer_norm_rms_epsilon'
  | 'attention.sliding_window'
  | 'attn_logit_softcapping'
  | 'final_logit_softcapping'
  | 'rope.dimension_count'
  | 'rope.freq_base'
  | 'rope.scaling.type'
  | 'rope.scaling.factor'
  | 'rope.scaling.original_context_length';

/** `general.*` keys. */
type GeneralKey =
  | 'general.architecture'
  | 'general.name'
  | 'general.alignment'
  | 'general.file_type'
  | 'general.quantization_version'
  | 'general.size_label'
  | 'general.license';

/** `tokenizer.*` keys. */
type TokenizerKey =
  | 'tokenizer.ggml.model'
  | 'tokenizer.ggml.pre'
  | 'tokenizer.ggml.tokens'
  | 'tokenizer.ggml.scores'
  | 'tokenizer.ggml.token_type'
  | 'tokenizer.ggml.merges'
  | 'tokenizer.ggml.bos_token_id'
  | 'tokenizer.ggml.eos_token_id'
  | 'tokenizer.ggml.unknown_token_id'
  | 'tokenizer.ggml.padding_token_id'
  | 'tokenizer.ggml.add_bos_token'
  | 'tokenizer.ggml.add_eos_token'
  | 'tokenizer.ggml.add_space_prefix'
  | 'tokenizer.chat_template';

/** An architecture-prefixed key, e.g. `llama.context_length`. */
type ArchMetadataKey<TArch extends string = string> = `${TArch}.${ArchKeySuffix}`;

/** Every well-known key; any other string is still accepted (`string & {}` keeps editor completion). */
export type GgufMetadataKey = GeneralKey | TokenizerKey | ArchMetadataKey | (string & {});

/** What the getters read: a parsed file, or anything with the same metadata fields. */
export type GgufMetadataSource = Pick<GgufFile, 'metadata' | 'metadataTypes'>;

function describe(file: GgufMetadataSource, key: string): string {
  const type = file.metadataTypes[key];
  return type === undefined ? 'untyped' : valueTypeName(type);
}

function missing(key: string, expected: string): LlmError {
  return new LlmError(
    'gguf-invalid',
    `GGUF metadata key "${key}" is missing (expected ${expected}); the model file is incomplete or of another kind`,
    {
      details: { field: key, expected },
    },
  );
}

function wrongType(file: GgufMetadataSource, key: string, expected: string): LlmError {
  const stored = describe(file, key);
  return new LlmError('gguf-invalid', `GGUF metadata key "${key}" has type ${stored}, expected ${expected}`, {
    details: { field: key, expected, stored },
  });
}

/** True when `key` is present (own key of the null-prototype metadata object). */
export function hasKey(file: GgufMetadataSource, key: GgufMetadataKey): boolean {
  return Object.hasOwn(file.metadata, key);
}

/** The raw value of `key`, or undefined. */
function getOptionalValue(file: GgufMetadataSource, key: GgufMetadataKey): GgufValue | undefined {
  return Object.hasOwn(file.metadata, key) ? file.metadata[key] : undefined;
}

/** A string value, or undefined when absent; `gguf-invalid` when present with another type. */
export function getOptionalString(file: GgufMetadataSource, key: GgufMetadataKey): string | undefined {
  const v = getOptionalValue(file, key);
  if (v === undefined || typeof v === 'string') return v;
  throw wrongType(file, key, 'STRING');
}

/** A string value; `gguf-invalid` when missing or of another type. */
export function getString(file: GgufMetadataSource, key: GgufMetadataKey): string {
  const v = getOptionalString(file, key);
  if (v === undefined) throw missing(key, 'STRING');
  return v;
}

/**
 * A numeric value (any integer or float type; 64-bit integers converted when they are exact JS numbers), or undefined
 * when absent; `gguf-invalid` for other types or 64-bit values beyond 2^53.
 */
export function getOptionalNumber(file: GgufMetadataSource, key: GgufMetadataKey): number | undefined {
  const v = getOptionalValue(file, key);
  if (v === undefined || typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    if (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
    throw wrongType(file, key, 'a number within ±2^53');
  }
  throw wrongType(file, key, 'a number');
}

/** A numeric value; `gguf-invalid` when missing or not numeric. */
export function getNumber(file: GgufMetadataSource, key: GgufMetadataKey): number {
  const v = getOptionalNumber(file, key);
  if (v === undefined) throw missing(key, 'a number');
  return v;
}

/** A boolean value, or undefined when absent. */
function getOptionalBoolean(file: GgufMetadataSource, key: GgufMetadataKey): boolean | undefined {
  const v = getOptionalValue(file, key);
  if (v === undefined || typeof v === 'boolean') return v;
  throw wrongType(file, key, 'BOOL');
}

/** A boolean value; `gguf-invalid` when missing or not BOOL. */
export function getBoolean(file: GgufMetadataSource, key: GgufMetadataKey): boolean {
  const v = getOptionalBoolean(file, key);
  if (v === undefined) throw missing(key, 'BOOL');
  return v;
}

/**
 * An array value (any element type), or undefined when absent. Arrays of numbers and booleans come back as the
 * parser decoded them: typed arrays (`GgufNumericArray`).
 */
export function getOptionalArray(
  file: GgufMetadataSource,
  key: GgufMetadataKey,
): readonly GgufValue[] | GgufNumericArray | undefined {
  const v = getOptionalValue(file, key);
  if (v === undefined || isGgufArray(v)) return v;
  throw wrongType(file, key, 'ARRAY');
}

/** An array value; `gguf-invalid` when missing or not an array. */
export function getArray(file: GgufMetadataSource, key: GgufMetadataKey): readonly GgufValue[] | GgufNumericArray {
  const v = getOptionalArray(file, key);
  if (v === undefined) throw missing(key, 'ARRAY');
  return v;
}

/** An ARRAY<STRING> value, or undefined when absent. */
function getOptionalStringArray(file: GgufMetadataSource, key: GgufMetadataKey): readonly string[] | undefined {
  const v = getOptionalArray(file, key);
  if (v === undefined) return undefined;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as readonly string[];
  throw wrongType(file, key, 'ARRAY<STRING>');
}

/** An ARRAY<STRING> value; `gguf-invalid` when missing or of another type. */
export function getStringArray(file: GgufMetadataSource, key: GgufMetadataKey): readonly string[] {
  const v = getOptionalStringArray(file, key);
  if (v === undefined) throw missing(key, 'ARRAY<STRING>');
  return v;
}

/**
 * A numeric array as plain numbers (64-bit integers converted when exact; booleans as 0/1), or undefined when absent.
 * Copies typed arrays into a JS array: meant for short arrays such as per-layer hyper-parameters.
 */
function getOptionalNumberArray(file: GgufMetadataSource, key: GgufMetadataKey): readonly number[] | undefined {
  const v = getOptionalArray(file, key);
  if (v === undefined) return undefined;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) {
    if (v.every((x) => x >= BigInt(Number.MIN_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER)))
      return Array.from(v, Number);
    throw wrongType(file, key, 'a numeric ARRAY within ±2^53');
  }
  if (!Array.isArray(v)) return Array.from(v as ArrayLike<number>);
  if (v.every((x) => typeof x === 'number')) return v as readonly number[];
  if (
    v.every(
      (x) => typeof x === 'bigint' && x >= BigInt(Number.MIN_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER),
    )
  ) {
    return v.map((x) => Number(x));
  }
  throw wrongType(file, key, 'a numeric ARRAY');
}

/** A numeric array; `gguf-invalid` when missing or not numeric. */
export function getNumberArray(file: GgufMetadataSource, key: GgufMetadataKey): readonly number[] {
  const v = getOptionalNumberArray(file, key);
  if (v === undefined) throw missing(key, 'a numeric ARRAY');
  return v;
}

/** `general.architecture`; `gguf-invalid` when missing (every model file has it). */
export function getArchitecture(file: GgufMetadataSource): string {
  return getString(file, 'general.architecture');
}

/** The architecture-prefixed key: `archKey(file, 'context_length')` → `'llama.context_length'`. */
export function archKey<TSuffix extends ArchKeySuffix | (string & {})>(
  file: GgufMetadataSource,
  suffix: TSuffix,
): `${string}.${TSuffix}` {
  return `${getArchitecture(file)}.${suffix}`;
}

/** A numeric hyper-parameter `{arch}.{suffix}`; `gguf-invalid` when missing. */
export function getArchNumber(file: GgufMetadataSource, suffix: ArchKeySuffix | (string & {})): number {
  return getNumber(file, archKey(file, suffix));
}

/** A numeric hyper-parameter `{arch}.{suffix}`, or undefined when absent. */
export function getOptionalArchNumber(
  file: GgufMetadataSource,
  suffix: ArchKeySuffix | (string & {}),
): number | undefined {
  return getOptionalNumber(file, archKey(file, suffix));
}

/**
 * A per-layer hyper-parameter that may be a scalar or an array (e.g. `attention.head_count_kv` in some models):
 * returns one number per layer, or undefined when absent.
 */
export function getOptionalArchPerLayer(
  file: GgufMetadataSource,
  suffix: ArchKeySuffix | (string & {}),
  nLayers: number,
): readonly number[] | undefined {
  const key = archKey(file, suffix);
  const v = getOptionalValue(file, key);
  if (v === undefined) return undefined;
  if (!isGgufArray(v)) return new Array<number>(nLayers).fill(getNumber(file, key));
  // Length first: a hostile array is not copied before it is known to have one entry per layer.
  if (v.length !== nLayers) {
    throw new LlmError(
      'gguf-invalid',
      `GGUF metadata key "${key}" has ${v.length} entries, expected one per layer (${nLayers})`,
      {
        details: { field: key, expected: nLayers, value: v.length },
      },
    );
  }
  return getNumberArray(file, key);
}
