/**
 * `SplitByteSource`: one `ByteSource` over the parts of a `gguf-split` model that reads as a single, ordinary GGUF
 * file — a synthesised header (the first part's metadata without the `split.*` keys, the tensor tables of every part
 * merged, offsets moved) followed by each part's tensor data section in turn. The parser, the memory plan, the
 * weight loader and `inspect` therefore see the whole model without knowing it was split, and a read of a tensor
 * goes to the one part that holds it (a read across parts is stitched together; gaps between parts read as zeros).
 * The parts are validated as a set when it is opened: see `open`.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import { SPLIT_COUNT_KEY, SPLIT_NO_KEY, SPLIT_TENSORS_COUNT_KEY, splitInfoOf } from '../gguf/split-metadata.js';
import { GgufValueType, type GgufFile, type GgufValue, type GgufValueTypeInfo } from '../gguf/types.js';
import { type GgufHeaderTensor, writeGgufHeader } from '../gguf/write.js';
import { type ByteSource, MemoryByteSource, checkReadRange } from './byte-source.js';

/** Where one part's tensor data lies in the merged file. */
interface Segment {
  /** Absolute offset in the merged file. */
  readonly start: number;
  readonly length: number;
  readonly source: ByteSource;
  /** Offset of the segment's first byte in `source`. */
  readonly sourceOffset: number;
}

/** What `SplitByteSource.open` learns about each part. */
export interface SplitPartInfo {
  readonly name: string;
  readonly size: number;
  readonly tensorCount: number;
}

function splitError(message: string, details: Record<string, unknown>): LlmError {
  return new LlmError('gguf-invalid', message, { details: { reason: 'split', ...details } });
}

function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

/** Deep equality of two metadata values (scalars, strings, typed arrays, nested arrays). */
function sameValue(a: GgufValue, b: GgufValue): boolean {
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (a.length !== b.length || Array.isArray(a) !== Array.isArray(b)) return false;
  for (let i = 0; i < a.length; i++) {
    if (!sameValue(a[i] as GgufValue, b[i] as GgufValue)) return false;
  }
  return true;
}

/** The merged view of a split model's parts. */
export class SplitByteSource implements ByteSource {
  readonly size: number;
  readonly name: string;
  /** Content identity for the prompt cache: derived from every part's sha256 (or etag) when all parts have one. */
  readonly sha256: string | null;
  readonly etag: string | null;

  private constructor(
    private readonly header: MemoryByteSource,
    private readonly segments: readonly Segment[],
    /** The parts, in order. */
    readonly parts: readonly ByteSource[],
    /** Name, size and tensor count of each part, in order. */
    readonly partInfo: readonly SplitPartInfo[],
    size: number,
  ) {
    this.size = size;
    this.name = `${parts[0].name} (+${parts.length - 1} parts)`;
    const ids = parts.map((p) => p as ByteSource & { sha256?: string | null; etag?: string | null });
    this.sha256 = ids.every((p) => typeof p.sha256 === 'string' && p.sha256 !== '')
      ? ids.map((p) => p.sha256).join('+')
      : null;
    this.etag = ids.every((p) => typeof p.etag === 'string' && p.etag !== '') ? ids.map((p) => p.etag).join('+') : null;
  }

  /**
   * Parses every part's header and checks they form one set, in order: each part has `split.count` equal to the
   * number of parts, `split.no` equal to its position, the same `split.tensors.count` as the first part and equal to
   * the tensors found, no tensor name twice, and no metadata key with a different value than in the first part.
   * Any failure rejects with `LlmError('gguf-invalid')` (`details.reason: 'split'`, `details.part` 1-based) and
   * closes nothing: the caller owns `parts`.
   */
  static async open(parts: readonly ByteSource[], signal?: AbortSignal): Promise<SplitByteSource> {
    if (parts.length < 2)
      throw splitError(`a split model needs at least 2 parts, got ${parts.length}`, { parts: parts.length });
    const files: GgufFile[] = [];
    for (const p of parts) {
      throwIfAborted(signal, 'opening the split model');
      files.push(await parseGguf(p, { signal }));
    }
    const first = splitInfoOf(files[0]);
    if (first === null) {
      throw splitError(
        `${parts[0].name} has no "${SPLIT_COUNT_KEY}" key: it is not the first part of a gguf-split model, ` +
          'so it cannot be loaded together with other files; pass it alone',
        { part: 1 },
      );
    }
    if (first.count !== parts.length) {
      throw splitError(
        `${parts[0].name} is part of a ${first.count}-part split model but ${parts.length} parts were given; ` +
          (first.count > parts.length ? 'a part is missing' : 'extra files were given') +
          ' (pass every part, in order)',
        { part: 1, expected: first.count, given: parts.length },
      );
    }
    let tensorTotal = 0;
    const names = new Set<string>();
    for (let i = 0; i < files.length; i++) {
      const info = splitInfoOf(files[i]);
      const where = { part: i + 1, name: parts[i].name };
      if (info === null) {
        throw splitError(
          `${parts[i].name} (part ${i + 1}) has no "${SPLIT_COUNT_KEY}" key: it is not a part of this split model`,
          where,
        );
      }
      if (info.count !== first.count) {
        throw splitError(
          `${parts[i].name} (part ${i + 1}) says ${SPLIT_COUNT_KEY} = ${info.count} but the first part says ` +
            `${first.count}: the parts come from different models`,
          { ...where, value: info.count, expected: first.count },
        );
      }
      if (info.no !== i) {
        throw splitError(
          `${parts[i].name} is given as part ${i + 1} but its ${SPLIT_NO_KEY} is ${String(info.no)} (part ` +
            `${info.no === null ? '?' : info.no + 1}): pass the parts in order, first part first`,
          { ...where, value: info.no },
        );
      }
      if (info.tensorsCount !== first.tensorsCount) {
        throw splitError(
          `${parts[i].name} (part ${i + 1}) says ${SPLIT_TENSORS_COUNT_KEY} = ${String(info.tensorsCount)} but the ` +
            `first part says ${String(first.tensorsCount)}: the parts come from different models`,
          { ...where, value: info.tensorsCount },
        );
      }
      for (const key of Object.keys(files[i].metadata)) {
        if (key.startsWith('split.') || !Object.hasOwn(files[0].metadata, key)) continue;
        if (key === 'general.alignment') continue; // each part is laid out with its own alignment
        if (!sameValue(files[i].metadata[key], files[0].metadata[key])) {
          throw splitError(
            `${parts[i].name} (part ${i + 1}) has metadata "${key}" different from the first part: ` +
              'the parts come from different models',
            { ...where, key },
          );
        }
      }
      for (const t of files[i].tensors) {
        if (names.has(t.name)) {
          throw splitError(
            `tensor "${t.name}" is in more than one part (again in part ${i + 1}): the parts come from different models`,
            where,
          );
        }
        names.add(t.name);
      }
      tensorTotal += files[i].tensors.length;
    }
    if (first.tensorsCount !== null && first.tensorsCount !== tensorTotal) {
      throw splitError(
        `the parts hold ${tensorTotal} tensors but ${SPLIT_TENSORS_COUNT_KEY} says ${first.tensorsCount}: ` +
          'a part is truncated or from another model',
        { expected: first.tensorsCount, found: tensorTotal },
      );
    }
    return SplitByteSource.build(parts, files);
  }

  /** Lays the parts' data sections out after a synthesised header. */
  private static build(parts: readonly ByteSource[], files: readonly GgufFile[]): SplitByteSource {
    // Every part keeps its own alignment: bases are aligned to the largest, offsets checked against the smallest.
    const maxAlign = Math.max(...files.map((f) => f.alignment));
    const minAlign = Math.min(...files.map((f) => f.alignment));
    const tensors: GgufHeaderTensor[] = [];
    const bases: number[] = [];
    let base = 0;
    for (const f of files) {
      bases.push(base);
      for (const t of f.tensors) tensors.push({ name: t.name, type: t.type, shape: t.shape, offset: base + t.offset });
      base = alignUp(base + (f.fileSize - f.tensorDataOffset), maxAlign);
    }
    const metadata: Record<string, GgufValue> = Object.create(null) as Record<string, GgufValue>;
    const metadataTypes: Record<string, GgufValueTypeInfo> = Object.create(null) as Record<string, GgufValueTypeInfo>;
    for (const key of Object.keys(files[0].metadata)) {
      if (key === SPLIT_NO_KEY || key === SPLIT_COUNT_KEY || key === SPLIT_TENSORS_COUNT_KEY) continue;
      metadata[key] = files[0].metadata[key];
      metadataTypes[key] = files[0].metadataTypes[key];
    }
    if (minAlign !== files[0].alignment) {
      metadata['general.alignment'] = minAlign;
      metadataTypes['general.alignment'] = { type: GgufValueType.UINT32 };
    }
    const header = writeGgufHeader({ version: files[0].version, metadata, metadataTypes, tensors });
    const segments: Segment[] = files.map((f, i) => ({
      start: header.byteLength + bases[i],
      length: f.fileSize - f.tensorDataOffset,
      source: parts[i],
      sourceOffset: f.tensorDataOffset,
    }));
    const last = segments[segments.length - 1];
    const partInfo = files.map((f, i) => ({ name: parts[i].name, size: parts[i].size, tensorCount: f.tensors.length }));
    return new SplitByteSource(
      new MemoryByteSource(header, 'split header'),
      segments,
      parts,
      partInfo,
      last.start + last.length,
    );
  }

  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal, `read of ${this.name}`);
    checkReadRange(this.name, this.size, offset, length);
    const end = offset + length;
    const headerEnd = this.header.size;
    // The common case, a tensor: one read from the part that holds it.
    for (const s of this.segments) {
      if (offset >= s.start && end <= s.start + s.length)
        return s.source.read(s.sourceOffset + offset - s.start, length, signal);
    }
    if (end <= headerEnd) return this.header.read(offset, length, signal);
    const out = new Uint8Array(length); // gaps between sections stay zero
    if (offset < headerEnd) out.set(await this.header.read(offset, Math.min(end, headerEnd) - offset), 0);
    for (const s of this.segments) {
      const from = Math.max(offset, s.start);
      const to = Math.min(end, s.start + s.length);
      if (from >= to) continue;
      out.set(await s.source.read(s.sourceOffset + from - s.start, to - from, signal), from - offset);
    }
    return out;
  }

  /** Closes every part. */
  async close(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.close?.()));
  }
}
