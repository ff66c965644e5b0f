/**
 * Facts of llama.cpp's `gguf-split` format: a model cut into `prefix-00001-of-0000N.gguf` … parts. Every part is a
 * complete GGUF file holding whole tensors (a tensor never spans parts); the first part carries all the model's
 * metadata, every part carries `split.no` (u16, 0-based), `split.count` (u16) and `split.tensors.count` (i32, the
 * tensors of the whole set). Names follow llama.cpp's `llama_split_path`: `%s-%05d-of-%05d.gguf`, numbered from 1.
 */

import { GgufValueType, type GgufFile, type GgufValueTypeInfo } from './types.js';

/** Metadata key: this part's index, 0-based (u16). */
export const SPLIT_NO_KEY = 'split.no';
/** Metadata key: number of parts in the set (u16). */
export const SPLIT_COUNT_KEY = 'split.count';
/** Metadata key: number of tensors in the whole set (i32). */
export const SPLIT_TENSORS_COUNT_KEY = 'split.tensors.count';
/** Stored types llama.cpp's gguf-split writes for the three keys. */
export const SPLIT_KEY_TYPES: Readonly<Record<string, GgufValueTypeInfo>> = {
  [SPLIT_NO_KEY]: { type: GgufValueType.UINT16 },
  [SPLIT_COUNT_KEY]: { type: GgufValueType.UINT16 },
  [SPLIT_TENSORS_COUNT_KEY]: { type: GgufValueType.INT32 },
};

/** The split keys of one part, or null when the file has no `split.count` (an ordinary, unsplit file). */
export interface SplitInfo {
  /** 0-based index of this part (`split.no`; null when absent). */
  readonly no: number | null;
  /** Number of parts (`split.count`). */
  readonly count: number;
  /** Tensors of the whole set (`split.tensors.count`; null when absent). */
  readonly tensorsCount: number | null;
}

function integerOf(value: unknown): number | null {
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** Reads the split keys of a parsed part; null when `split.count` is absent. Non-integer values read as NaN-free nulls. */
export function splitInfoOf(gguf: Pick<GgufFile, 'metadata'>): SplitInfo | null {
  const m = gguf.metadata;
  if (!Object.hasOwn(m, SPLIT_COUNT_KEY)) return null;
  return {
    no: Object.hasOwn(m, SPLIT_NO_KEY) ? integerOf(m[SPLIT_NO_KEY]) : null,
    count: integerOf(m[SPLIT_COUNT_KEY]) ?? -1,
    tensorsCount: Object.hasOwn(m, SPLIT_TENSORS_COUNT_KEY) ? integerOf(m[SPLIT_TENSORS_COUNT_KEY]) : null,
  };
}

/** A split part's file name (or URL/path) taken apart: everything before `-NNNNN-of-NNNNN.gguf`, and the numbers. */
export interface SplitName {
  /** Text before `-00001-of-0000N.gguf` (may include a directory or URL). */
  readonly prefix: string;
  /** 1-based part number in the name. */
  readonly part: number;
  /** Part count in the name. */
  readonly count: number;
  /** Text after `.gguf` (a URL's query or fragment), kept on every derived name. */
  readonly suffix: string;
}

const SPLIT_NAME = /^(.*)-(\d{5})-of-(\d{5})\.gguf((?:[?#].*)?)$/s;

/** Parses `prefix-00002-of-00005.gguf` (with an optional `?query`/`#hash` after it); null for any other name. */
export function parseSplitName(name: string): SplitName | null {
  const m = SPLIT_NAME.exec(name);
  if (m === null) return null;
  const part = Number(m[2]);
  const count = Number(m[3]);
  if (part < 1 || count < 1 || part > count) return null;
  return { prefix: m[1], part, count, suffix: m[4] };
}

/** The name of part `part` (1-based) of `count`: `${prefix}-${part:05}-of-${count:05}.gguf${suffix}` (llama_split_path). */
function splitPartName(prefix: string, part: number, count: number, suffix = ''): string {
  const pad = (n: number): string => String(n).padStart(5, '0');
  return `${prefix}-${pad(part)}-of-${pad(count)}.gguf${suffix}`;
}

/** The names of every part of the set `name` belongs to, first part first; null when `name` is not a split name. */
export function splitPartNames(name: string): string[] | null {
  const s = parseSplitName(name);
  if (s === null || s.count < 2) return null;
  return Array.from({ length: s.count }, (_, i) => splitPartName(s.prefix, i + 1, s.count, s.suffix));
}
