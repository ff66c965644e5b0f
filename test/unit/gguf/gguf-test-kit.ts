/**
 * Test kit for the GGUF tests: a raw little-endian byte builder for hand-made (hostile) headers, a small model built
 * with the writer, a read-counting ByteSource, and helpers asserting a `gguf-invalid` outcome.
 */

import { readFileSync } from 'node:fs';
import type { ErrorCode, LlmError } from '../../../src/errors.js';
import { GgmlType, type GgufFile, GgufValueType, type GgufWriteInput, parseGguf } from '../../../src/gguf/index.js';
import { type ByteSource, MemoryByteSource } from '../../../src/io/byte-source.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { expectLlmError as expectCodedLlmError } from '../../helpers/llm-error.js';

/** Builds arbitrary (possibly invalid) GGUF bytes field by field. */
export class RawGguf {
  private readonly parts: number[] = [];
  u8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  u32(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v >>> 0, true);
    return this.raw(b);
  }
  u64(v: number | bigint): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, BigInt(v)), true);
    return this.raw(b);
  }
  f32(v: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, v, true);
    return this.raw(b);
  }
  str(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u64(b.length).raw(b);
  }
  raw(b: Uint8Array): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  zeros(n: number): this {
    for (let i = 0; i < n; i++) this.parts.push(0);
    return this;
  }
  /** Pads with zeros up to a multiple of `alignment`. */
  align(alignment: number): this {
    return this.zeros((alignment - (this.parts.length % alignment)) % alignment);
  }
  /** "GGUF", version, tensor count, kv count. */
  header(version: number, nTensors: number | bigint, nKv: number | bigint): this {
    return this.raw(new Uint8Array([0x47, 0x47, 0x55, 0x46]))
      .u32(version)
      .u64(nTensors)
      .u64(nKv);
  }
  /** A tensor info: name, dims, type id, offset. */
  tensor(name: string, shape: (number | bigint)[], type: number, offset: number | bigint): this {
    this.str(name).u32(shape.length);
    for (const d of shape) this.u64(d);
    return this.u32(type).u64(offset);
  }
  get length(): number {
    return this.parts.length;
  }
  build(): Uint8Array {
    return new Uint8Array(this.parts);
  }
}

/** f32 bytes of `values`. */
function f32Bytes(values: number[]): Uint8Array {
  return new Uint8Array(new Float32Array(values).buffer);
}

/** A small two-tensor llama-shaped model with a vocabulary, for round-trip, truncation and CLI tests. */
export function tinyModel(): GgufWriteInput {
  return {
    metadata: {
      'general.architecture': 'llama',
      'general.name': 'tiny',
      'llama.context_length': 128,
      'llama.embedding_length': 8,
      'llama.block_count': 1,
      'llama.attention.head_count': 2,
      'llama.attention.layer_norm_rms_epsilon': 1e-5,
      'tokenizer.ggml.model': 'llama',
      'tokenizer.ggml.tokens': ['<unk>', '<s>', '</s>', 'a', 'b', 'ab'],
      'tokenizer.ggml.scores': [0, 0, 0, -1, -2, -3],
      'tokenizer.ggml.token_type': [2, 3, 3, 1, 1, 1],
    },
    metadataTypes: { 'llama.attention.layer_norm_rms_epsilon': { type: GgufValueType.FLOAT32 } },
    tensors: [
      {
        name: 'token_embd.weight',
        type: GgmlType.F32,
        shape: [8, 6],
        data: f32Bytes(Array.from({ length: 48 }, (_, i) => i / 8)),
      },
      { name: 'output_norm.weight', type: GgmlType.F32, shape: [8], data: f32Bytes([1, 1, 1, 1, 1, 1, 1, 1]) },
      { name: 'blk.0.q4.weight', type: GgmlType.Q4_0, shape: [32, 2], data: new Uint8Array(36).fill(7) },
    ],
  };
}

/** A ByteSource over memory that records every read (to check incremental parsing). */
export class CountingSource implements ByteSource {
  readonly reads: { offset: number; length: number }[] = [];
  private readonly inner: MemoryByteSource;
  readonly size: number;
  readonly name = 'counting';
  constructor(
    bytes: Uint8Array,
    private readonly onRead?: (n: number) => void,
  ) {
    this.inner = new MemoryByteSource(bytes);
    this.size = bytes.byteLength;
  }
  read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.reads.push({ offset, length });
    this.onRead?.(this.reads.length);
    return this.inner.read(offset, length, signal);
  }
  /** Highest byte offset (exclusive) read so far. */
  get maxEnd(): number {
    return Math.max(0, ...this.reads.map((r) => r.offset + r.length));
  }
}

/** Awaits `p` and asserts it rejected with `LlmError(code)` (default `gguf-invalid`); returns the error. */
export function expectLlmError(
  p: Promise<unknown>,
  code: ErrorCode = 'gguf-invalid',
  message?: RegExp,
): Promise<LlmError> {
  return expectCodedLlmError(p, code, message);
}

const fixtureCache = new Map<string, Uint8Array>();
/** Bytes of a fixture file, read once per test file. */
export function fixtureBytes(path: string): Uint8Array {
  let b = fixtureCache.get(path);
  if (!b) {
    b = new Uint8Array(readFileSync(path));
    fixtureCache.set(path, b);
  }
  return b;
}

/** Parses a GGUF file on disk through `NodeFileSource` (header reads only). */
export async function parseGgufFile(path: string): Promise<GgufFile> {
  const src = await NodeFileSource.open(path);
  try {
    return await parseGguf(src);
  } finally {
    await src.close();
  }
}
