/**
 * A deterministic gguf-split for tests: cuts a GGUF file into `n` parts the way llama.cpp's `gguf-split` lays them
 * out — whole tensors in file order, spread as evenly as possible; the first part carries all metadata, every part
 * `split.no` / `split.count` / `split.tensors.count` (u16/u16/i32). Options make the malformed sets the tests need.
 */

import { parseGguf } from '../../src/gguf/parse.js';
import {
  SPLIT_COUNT_KEY,
  SPLIT_KEY_TYPES,
  SPLIT_NO_KEY,
  SPLIT_TENSORS_COUNT_KEY,
} from '../../src/gguf/split-metadata.js';
import type { GgufValue, GgufValueTypeInfo } from '../../src/gguf/types.js';
import { type GgufWriteTensor, writeGguf } from '../../src/gguf/write.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';

/** Options of `splitGguf`. */
export interface SplitGgufOptions {
  /** Put no tensor in the first part (gguf-split's `--no-tensor-first-split`). */
  readonly noTensorsInFirst?: boolean;
  /** Extra metadata (values and types) written into part `index` (0-based), overriding the split keys too. */
  readonly overrides?: Readonly<
    Record<number, { metadata: Record<string, GgufValue>; types?: Record<string, GgufValueTypeInfo> }>
  >;
  /** `general.alignment` of the parts after the first (default: the file's). */
  readonly laterAlignment?: number;
}

/** Splits the GGUF `bytes` into `n` part files (n ≥ 1). */
export async function splitGguf(
  bytes: Uint8Array,
  n: number,
  options: SplitGgufOptions = {},
): Promise<Uint8Array<ArrayBuffer>[]> {
  const file = await parseGguf(new MemoryByteSource(bytes));
  const tensors: GgufWriteTensor[] = file.tensors.map((t) => ({
    name: t.name,
    type: t.type,
    shape: t.shape,
    data: bytes.subarray(file.tensorDataOffset + t.offset, file.tensorDataOffset + t.offset + t.byteLength),
  }));
  const groups: GgufWriteTensor[][] = Array.from({ length: n }, () => []);
  const first = options.noTensorsInFirst === true ? 1 : 0;
  const slots = n - first;
  tensors.forEach((t, i) => groups[first + Math.floor((i * slots) / tensors.length)].push(t));
  return groups.map((group, i) => {
    const split: Record<string, GgufValue> = {
      [SPLIT_NO_KEY]: i,
      [SPLIT_COUNT_KEY]: n,
      [SPLIT_TENSORS_COUNT_KEY]: tensors.length,
    };
    const base: Record<string, GgufValue> = i === 0 ? { ...file.metadata } : {};
    const types: Record<string, GgufValueTypeInfo> = i === 0 ? { ...file.metadataTypes } : {};
    if (i > 0 && options.laterAlignment !== undefined) {
      base['general.alignment'] = options.laterAlignment;
      types['general.alignment'] = { type: 4 };
    }
    const o = options.overrides?.[i];
    return <Uint8Array<ArrayBuffer>>writeGguf({
      version: file.version,
      metadata: { ...base, ...split, ...o?.metadata },
      metadataTypes: { ...types, ...SPLIT_KEY_TYPES, ...o?.types },
      tensors: group,
    });
  });
}

/** File names of a split set: `${stem}-00001-of-0000N.gguf` … */
export function splitNames(stem: string, n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `${stem}-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf`,
  );
}
