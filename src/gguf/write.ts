/**
 * `writeGguf` / `writeGgufChunks`: serialise metadata (with explicit or inferred value types) and tensors into a GGUF
 * v3 (or v2) file, little-endian, with llama.cpp's padding. Used by tests and tools to make models; the contract is
 * `parseGguf(new MemoryByteSource(writeGguf(x)))` reproduces `x`. Spec: ggml/docs/gguf.md.
 */

import { LlmError } from '../errors.js';
import { ALIGNMENT_KEY, GGUF_DEFAULT_ALIGNMENT } from './parse.js';
import { GGUF_TYPED_ARRAYS, LITTLE_ENDIAN_HOST, checkValue, inferValueType } from './value-types.js';
import { GGML_TYPES, GgufValueType, type GgmlType, type GgufValue, type GgufValueTypeInfo } from './types.js';

/** One tensor to write. */
export interface GgufWriteTensor {
  /** Tensor name, e.g. `blk.0.attn_q.weight`. */
  readonly name: string;
  readonly type: GgmlType;
  /** ggml `ne` order (shape[0] = row length), 1–4 dims. */
  readonly shape: readonly number[];
  /** Raw ggml blocks: exactly (product(shape) / blockElements) × blockBytes bytes. */
  readonly data: Uint8Array;
  /**
   * Data offset relative to the tensor data section. Omit on every tensor to pack them in order (aligned); give it on
   * every tensor to place them yourself (aligned, non-overlapping; gaps are zero-filled) — e.g. to test files whose
   * tensor table is not in offset order.
   */
  readonly offset?: number;
}

/** What `writeGguf` writes. The same shape as the parsed `GgufFile` where they overlap. */
export interface GgufWriteInput {
  /** GGUF version; default 3. */
  readonly version?: 2 | 3;
  /** Metadata values in the order to write them. `general.alignment` (u32) sets the data alignment (default 32). */
  readonly metadata?: Readonly<Record<string, GgufValue>>;
  /** Stored types by key. A key without an entry gets `inferValueType(value)`. */
  readonly metadataTypes?: Readonly<Record<string, GgufValueTypeInfo>>;
  readonly tensors?: readonly GgufWriteTensor[];
}

/** Growable little-endian byte sink for the header. */
class ByteSink {
  // buf: bytes [0, len) written so far; view aliases buf. Both are replaced when the sink grows.
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  len = 0;
  private static readonly utf8 = new TextEncoder();

  /** Reserves `n` bytes and returns their offset. Grows (replacing buf and view) first: read them after calling. */
  private reserve(n: number): number {
    if (this.len + n > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
      grown.set(this.buf.subarray(0, this.len));
      this.buf = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.len;
    this.len += n;
    return at;
  }
  u8(v: number): void {
    const at = this.reserve(1);
    this.view.setUint8(at, v);
  }
  i8(v: number): void {
    const at = this.reserve(1);
    this.view.setInt8(at, v);
  }
  u16(v: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, v, true);
  }
  i16(v: number): void {
    const at = this.reserve(2);
    this.view.setInt16(at, v, true);
  }
  u32(v: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, v, true);
  }
  i32(v: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, v, true);
  }
  f32(v: number): void {
    const at = this.reserve(4);
    this.view.setFloat32(at, v, true);
  }
  f64(v: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, v, true);
  }
  u64(v: bigint | number): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, BigInt(v), true);
  }
  i64(v: bigint | number): void {
    const at = this.reserve(8);
    this.view.setBigInt64(at, BigInt(v), true);
  }
  /** u64 byte length + UTF-8 bytes, encoded in place (a UTF-16 unit is at most 3 UTF-8 bytes). */
  string(s: string): void {
    const lenAt = this.reserve(8 + 3 * s.length);
    const { written } = ByteSink.utf8.encodeInto(s, this.buf.subarray(lenAt + 8));
    this.view.setBigUint64(lenAt, BigInt(written), true);
    this.len = lenAt + 8 + written;
  }
  raw(b: Uint8Array): void {
    const at = this.reserve(b.byteLength);
    this.buf.set(b, at);
  }
  zeros(n: number): void {
    const at = this.reserve(n);
    this.buf.fill(0, at, at + n); // string() may have left scratch bytes past len
  }
  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function bad(message: string, field: string): LlmError {
  return new LlmError('invalid-request', `writeGguf: ${message}`, { details: { field } });
}

/** Writes one value of stored type `type` (already validated by `checkValue`). */
function writeValue(sink: ByteSink, type: GgufValueTypeInfo, value: GgufValue): void {
  switch (type.type) {
    case GgufValueType.UINT8:
      return sink.u8(value as number);
    case GgufValueType.INT8:
      return sink.i8(value as number);
    case GgufValueType.UINT16:
      return sink.u16(value as number);
    case GgufValueType.INT16:
      return sink.i16(value as number);
    case GgufValueType.UINT32:
      return sink.u32(value as number);
    case GgufValueType.INT32:
      return sink.i32(value as number);
    case GgufValueType.FLOAT32:
      return sink.f32(value as number);
    case GgufValueType.BOOL:
      return sink.u8(value ? 1 : 0);
    case GgufValueType.STRING:
      return sink.string(value as string);
    case GgufValueType.UINT64:
      return sink.u64(value as bigint | number);
    case GgufValueType.INT64:
      return sink.i64(value as bigint | number);
    case GgufValueType.FLOAT64:
      return sink.f64(value as number);
    case GgufValueType.ARRAY: {
      const items = value as ArrayLike<GgufValue>;
      sink.u32(type.element.type);
      sink.u64(items.length);
      const elem = type.element;
      const exact = GGUF_TYPED_ARRAYS[elem.type]?.of;
      if (LITTLE_ENDIAN_HOST && exact !== undefined && items instanceof exact) {
        sink.raw(new Uint8Array(items.buffer, items.byteOffset, items.byteLength)); // already the file's encoding
        return;
      }
      for (let i = 0; i < items.length; i++) writeValue(sink, elem, items[i]);
      return;
    }
  }
}

/** A tensor with its resolved data offset. */
interface PlacedTensor {
  readonly tensor: GgufWriteTensor;
  readonly offset: number;
}

/** Validates tensors and assigns offsets (packed in order, or the caller's). Returns them and the data section size. */
function placeTensors(
  tensors: readonly GgufWriteTensor[],
  alignment: number,
): { placed: PlacedTensor[]; dataBytes: number } {
  const names = new Set<string>();
  const explicit = tensors.filter((t) => t.offset !== undefined).length;
  if (explicit !== 0 && explicit !== tensors.length) {
    throw bad('give "offset" on every tensor or on none', 'tensors.offset');
  }
  const placed: PlacedTensor[] = [];
  let next = 0;
  for (const t of tensors) {
    const field = `tensor "${t.name}"`;
    if (names.has(t.name)) throw bad(`duplicate ${field}`, field);
    names.add(t.name);
    const info = GGML_TYPES.get(t.type);
    if (info === undefined) throw bad(`${field} has unknown ggml type ${t.type}`, field);
    if (t.shape.length < 1 || t.shape.length > 4 || !t.shape.every((d) => Number.isSafeInteger(d) && d >= 1)) {
      throw bad(`${field} shape [${t.shape.join(', ')}] must have 1–4 positive integer dims`, field);
    }
    if (t.shape[0] % info.blockElements !== 0) {
      throw bad(
        `${field} row length ${t.shape[0]} is not a multiple of the ${info.name} block size ${info.blockElements}`,
        field,
      );
    }
    const nElements = t.shape.reduce((a, b) => a * b, 1);
    const byteLength = (nElements / info.blockElements) * info.blockBytes;
    if (t.data.byteLength !== byteLength) {
      throw bad(
        `${field} data has ${t.data.byteLength} bytes; ${info.name} [${t.shape.join(', ')}] needs ${byteLength}`,
        field,
      );
    }
    const offset = t.offset ?? next;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % alignment !== 0) {
      throw bad(`${field} offset ${offset} must be a non-negative multiple of the alignment ${alignment}`, field);
    }
    placed.push({ tensor: t, offset });
    next = alignUp(offset + byteLength, alignment);
  }
  const sorted = [...placed].sort((a, b) => a.offset - b.offset);
  let end = 0;
  for (const p of sorted) {
    if (p.offset < end)
      throw bad(`tensor "${p.tensor.name}" at offset ${p.offset} overlaps the previous tensor`, 'tensors.offset');
    end = alignUp(p.offset + p.tensor.data.byteLength, alignment);
  }
  return { placed, dataBytes: end };
}

function alignUp(n: number, alignment: number): number {
  return Math.ceil(n / alignment) * alignment;
}

/** Resolves every key's stored type (explicit or inferred) and validates values against them. */
function resolveTypes(input: GgufWriteInput): [string, GgufValueTypeInfo, GgufValue][] {
  const out: [string, GgufValueTypeInfo, GgufValue][] = [];
  const metadata = input.metadata ?? {};
  for (const key of Object.keys(metadata)) {
    const value = metadata[key];
    const type =
      (input.metadataTypes !== undefined && Object.hasOwn(input.metadataTypes, key)
        ? input.metadataTypes[key]
        : undefined) ?? inferValueType(value, key);
    checkValue(value, type, `metadata "${key}"`);
    out.push([key, type, value]);
  }
  return out;
}

/** The alignment the file will use: `general.alignment` when given (a power of two), else 32. */
function alignmentOf(input: GgufWriteInput): number {
  const raw =
    input.metadata !== undefined && Object.hasOwn(input.metadata, ALIGNMENT_KEY)
      ? input.metadata[ALIGNMENT_KEY]
      : undefined;
  if (raw === undefined) return GGUF_DEFAULT_ALIGNMENT;
  const n = typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || (n & (n - 1)) !== 0 || n > 1 << 20) {
    throw bad(`"${ALIGNMENT_KEY}" must be a power of two up to 2^20, got ${String(raw)}`, ALIGNMENT_KEY);
  }
  return n;
}

/**
 * Streams a GGUF file: first the header (padded to the alignment when there are tensors), then each tensor's data and
 * padding in offset order. Concatenate the chunks (or write them to a file) to get the model. Chunks alias the caller's
 * tensor data where possible. A file without tensors ends right after the metadata, as llama.cpp's vocab files do.
 */
export function* writeGgufChunks(input: GgufWriteInput): Generator<Uint8Array> {
  const version = input.version ?? 3;
  if (version !== 2 && version !== 3) throw bad(`version must be 2 or 3, got ${String(version)}`, 'version');
  const alignment = alignmentOf(input);
  const kvs = resolveTypes(input);
  const tensors = input.tensors ?? [];
  const { placed, dataBytes } = placeTensors(tensors, alignment);

  const sink = new ByteSink();
  sink.u8(0x47);
  sink.u8(0x47);
  sink.u8(0x55);
  sink.u8(0x46); // "GGUF"
  sink.u32(version);
  sink.u64(tensors.length);
  sink.u64(kvs.length);
  for (const [key, type, value] of kvs) {
    sink.string(key);
    sink.u32(type.type);
    writeValue(sink, type, value);
  }
  for (const { tensor, offset } of placed) {
    sink.string(tensor.name);
    sink.u32(tensor.shape.length);
    for (const d of tensor.shape) sink.u64(d);
    sink.u32(tensor.type);
    sink.u64(offset);
  }
  if (placed.length > 0) sink.zeros(alignUp(sink.len, alignment) - sink.len);
  yield sink.bytes();

  let pos = 0;
  for (const { tensor, offset } of [...placed].sort((a, b) => a.offset - b.offset)) {
    if (offset > pos) yield new Uint8Array(offset - pos);
    yield tensor.data;
    pos = offset + tensor.data.byteLength;
  }
  if (dataBytes > pos) yield new Uint8Array(dataBytes - pos);
}

/**
 * Serialises a GGUF file into one buffer (use `writeGgufChunks` for models that should not sit in memory twice).
 * Bad input (unknown type, wrong data size, value out of range for its type, duplicate names) throws
 * `LlmError('invalid-request')`.
 *
 * @example
 * const bytes = writeGguf({
 *   metadata: { 'general.architecture': 'llama', 'llama.context_length': 128 },
 *   metadataTypes: { 'llama.context_length': { type: GgufValueType.UINT32 } },
 *   tensors: [{ name: 'token_embd.weight', type: GgmlType.F32, shape: [4, 2], data: new Uint8Array(32) }],
 * });
 */
export function writeGguf(input: GgufWriteInput): Uint8Array {
  const chunks = [...writeGgufChunks(input)];
  const total = chunks.reduce((n, c) => n + c.byteLength, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** One tensor-table entry for `writeGgufHeader`: name, type, shape and a data offset the caller has placed. */
export interface GgufHeaderTensor {
  readonly name: string;
  readonly type: GgmlType;
  readonly shape: readonly number[];
  /** Data offset relative to the tensor data section; a multiple of the file's alignment. */
  readonly offset: number;
}

/**
 * Serialises only the header of a GGUF file (magic, version, metadata, tensor table), padded to the alignment when
 * there are tensors, for tensor data that lives elsewhere (e.g. the merged view of a split model). Tensor offsets
 * are written as given; they must be non-negative multiples of the alignment. Bad input: `LlmError('invalid-request')`.
 */
export function writeGgufHeader(
  input: Omit<GgufWriteInput, 'tensors'> & { readonly tensors: readonly GgufHeaderTensor[] },
): Uint8Array {
  const version = input.version ?? 3;
  if (version !== 2 && version !== 3) throw bad(`version must be 2 or 3, got ${String(version)}`, 'version');
  const meta = { metadata: input.metadata, metadataTypes: input.metadataTypes };
  const alignment = alignmentOf(meta);
  const kvs = resolveTypes(meta);
  const sink = new ByteSink();
  sink.u8(0x47);
  sink.u8(0x47);
  sink.u8(0x55);
  sink.u8(0x46); // "GGUF"
  sink.u32(version);
  sink.u64(input.tensors.length);
  sink.u64(kvs.length);
  for (const [key, type, value] of kvs) {
    sink.string(key);
    sink.u32(type.type);
    writeValue(sink, type, value);
  }
  for (const t of input.tensors) {
    if (!Number.isSafeInteger(t.offset) || t.offset < 0 || t.offset % alignment !== 0) {
      throw bad(
        `tensor "${t.name}" offset ${t.offset} must be a non-negative multiple of the alignment ${alignment}`,
        'tensors.offset',
      );
    }
    sink.string(t.name);
    sink.u32(t.shape.length);
    for (const d of t.shape) sink.u64(d);
    sink.u32(t.type);
    sink.u64(t.offset);
  }
  if (input.tensors.length > 0) sink.zeros(alignUp(sink.len, alignment) - sink.len);
  return sink.bytes();
}
