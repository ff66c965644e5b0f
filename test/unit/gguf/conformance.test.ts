/**
 * Conformance: every GGUF under ../shared parses (through a Node file source, incrementally) with the same metadata
 * (values, arrays and stored types), tensor table (name, type, shape, offset) and data offset as @huggingface/gguf.
 * Also checks that writeGguf re-serialises each parsed file (metadata, tensor table, data, padding) byte for byte.
 */

import { gguf as hfGguf } from '@huggingface/gguf';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type GgufValue, GgufValueType, parseGguf, writeGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { listGgufFiles } from '../../helpers/shared-path.js';
import { parseGgufFile } from './gguf-test-kit.js';

const FILES = listGgufFiles();
/** Pseudo-keys @huggingface/gguf adds to its metadata. */
const HF_PSEUDO_KEYS = new Set(['version', 'tensor_count', 'kv_count']);

/** The two parsers choose bigint vs number differently for 64-bit values: compare exact integers as numbers. */
function norm(v: unknown): unknown {
  if (typeof v === 'bigint')
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : `${v}n`;
  if (Array.isArray(v)) return v.map(norm);
  // We decode numeric and boolean arrays as typed arrays (booleans as 0/1); compare them element-wise as numbers.
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<unknown>, norm);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v;
}

/**
 * @huggingface/gguf decodes with a default TextDecoder, which drops a leading U+FEFF; we keep it (it is a real token
 * in llama vocabularies: token 30143 of llama-spm and phi-3). That one difference is expected.
 */
function isBomOnlyDifference(ours: unknown, theirs: unknown): boolean {
  return typeof ours === 'string' && ours.startsWith('\uFEFF') && theirs === ours.slice(1);
}

describe('conformance with @huggingface/gguf', () => {
  it('finds the shared fixtures', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(40);
    for (const dir of ['models/derived', 'models/synthetic', 'models/arch', 'tokenizer-vectors']) {
      expect(
        FILES.some((f) => f.includes(`/${dir}/`)),
        dir,
      ).toBe(true);
    }
  });

  it.each(FILES.map((f) => [f.slice(f.indexOf('/shared/') + 8), f]))('%s', async (_label, path) => {
    const ours = await parseGgufFile(path);
    const theirs = await hfGguf(path, { allowLocalFile: true, typedMetadata: true });

    expect(ours.version).toBe(Number(theirs.metadata.version));
    expect(ours.tensorDataOffset).toBe(Number(theirs.tensorDataOffset));
    const hfKeys = Object.keys(theirs.typedMetadata).filter((k) => !HF_PSEUDO_KEYS.has(k));
    expect(Object.keys(ours.metadata)).toEqual(hfKeys);
    for (const key of hfKeys) {
      const t = theirs.typedMetadata[key] as { value: unknown; type: number; subType?: number };
      const ourType = ours.metadataTypes[key];
      expect(ourType.type, `type of ${key}`).toBe(t.type);
      if (ourType.type === GgufValueType.ARRAY) expect(ourType.element.type, `element type of ${key}`).toBe(t.subType);
      const a = norm(ours.metadata[key]);
      const b = norm(t.value);
      if (Array.isArray(a) && Array.isArray(b)) {
        expect(a.length, `length of ${key}`).toBe(b.length);
        const firstDiff = a.findIndex((x, i) => !Object.is(x, b[i]) && !isBomOnlyDifference(x, b[i]));
        expect(firstDiff, `first differing element of ${key}`).toBe(-1);
      } else {
        expect(a, key).toEqual(b);
      }
    }

    expect(ours.tensors.map((t) => ({ name: t.name, type: t.type, shape: [...t.shape], offset: t.offset }))).toEqual(
      theirs.tensorInfos.map((t) => ({
        name: t.name,
        type: t.dtype,
        shape: t.shape.map(Number),
        offset: Number(t.offset),
      })),
    );
    for (const t of ours.tensors)
      expect(ours.tensorDataOffset + t.offset + t.byteLength).toBeLessThanOrEqual(ours.fileSize);
  });

  it.each(FILES.map((f) => [basename(f), f]))('%s is rewritten byte for byte by writeGguf', async (_label, path) => {
    const bytes = new Uint8Array(readFileSync(path));
    const file = await parseGguf(new MemoryByteSource(bytes));
    const rewritten = writeGguf({
      version: file.version,
      metadata: file.metadata as Record<string, GgufValue>,
      metadataTypes: file.metadataTypes,
      tensors: file.tensors.map((t) => ({
        name: t.name,
        type: t.type,
        shape: t.shape,
        offset: t.offset,
        data: bytes.subarray(file.tensorDataOffset + t.offset, file.tensorDataOffset + t.offset + t.byteLength),
      })),
    });
    expect(rewritten.length).toBe(bytes.length);
    expect(Buffer.compare(rewritten, bytes)).toBe(0);
  });
});
