/**
 * parseGguf on hand-made headers: valid edge cases (v2, vocab-only, custom alignment, tensors out of offset order,
 * `__proto__` keys) and every hostile case the parser must reject with `gguf-invalid` naming field and offset.
 */

import { describe, expect, it } from 'vitest';
import { LlmError } from '../../../src/errors.js';
import { GgmlType, GgufValueType, parseGguf, writeGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { CountingSource, RawGguf, expectLlmError, tinyModel } from './gguf-test-kit.js';

const parse = (b: Uint8Array, limits?: Parameters<typeof parseGguf>[1]) => parseGguf(new MemoryByteSource(b), limits);
const U32 = GgufValueType.UINT32;
const STR = GgufValueType.STRING;
const ARR = GgufValueType.ARRAY;

describe('parseGguf: valid files', () => {
  it('parses an empty v3 header (no metadata, no tensors)', async () => {
    const f = await parse(new RawGguf().header(3, 0, 0).build());
    expect(f).toMatchObject({ version: 3, tensors: [], alignment: 32, tensorDataOffset: 32, fileSize: 24 });
    expect(Object.keys(f.metadata)).toEqual([]);
  });

  it('parses v2', async () => {
    const b = new RawGguf().header(2, 0, 1).str('general.name').u32(STR).str('v2').build();
    const f = await parse(b);
    expect(f.version).toBe(2);
    expect(f.metadata['general.name']).toBe('v2');
  });

  it('reads every scalar value type', async () => {
    const r = new RawGguf().header(3, 0, 12);
    r.str('u8').u32(GgufValueType.UINT8).u8(250);
    r.str('i8').u32(GgufValueType.INT8).u8(0xff);
    r.str('u16').u32(GgufValueType.UINT16).u8(0x34).u8(0x12);
    r.str('i16').u32(GgufValueType.INT16).u8(0xfe).u8(0xff);
    r.str('u32').u32(U32).u32(0xffffffff);
    r.str('i32').u32(GgufValueType.INT32).u32(-5);
    r.str('f32').u32(GgufValueType.FLOAT32).f32(0.5);
    r.str('bool').u32(GgufValueType.BOOL).u8(1);
    r.str('str').u32(STR).str('héllo');
    r.str('u64')
      .u32(GgufValueType.UINT64)
      .u64(2n ** 64n - 1n);
    r.str('i64').u32(GgufValueType.INT64).u64(-3n);
    r.str('f64')
      .u32(GgufValueType.FLOAT64)
      .raw(new Uint8Array(new Float64Array([0.1]).buffer));
    const f = await parse(r.build());
    expect({ ...f.metadata }).toEqual({
      u8: 250,
      i8: -1,
      u16: 0x1234,
      i16: -2,
      u32: 0xffffffff,
      i32: -5,
      f32: 0.5,
      bool: true,
      str: 'héllo',
      u64: 2n ** 64n - 1n,
      i64: -3n,
      f64: 0.1,
    });
    expect(f.metadataTypes['u64']).toEqual({ type: GgufValueType.UINT64 });
  });

  it('reads arrays of strings and nested arrays with their types', async () => {
    const r = new RawGguf().header(3, 0, 2);
    r.str('strs').u32(ARR).u32(STR).u64(2).str('a').str('');
    r.str('nested').u32(ARR).u32(ARR).u64(2).u32(U32).u64(1).u32(7).u32(U32).u64(0);
    const f = await parse(r.build());
    expect(f.metadata['strs']).toEqual(['a', '']);
    expect(f.metadata['nested']).toEqual([Uint32Array.from([7]), new Uint32Array(0)]);
    expect(f.metadataTypes['nested']).toEqual({ type: ARR, element: { type: ARR, element: { type: U32 } } });
  });

  it('keeps strings byte-exact: a leading U+FEFF is data, invalid UTF-8 becomes U+FFFD', async () => {
    const b = new RawGguf()
      .header(3, 0, 2)
      .str('bom')
      .u32(STR)
      .str('\uFEFF')
      .str('bad')
      .u32(STR)
      .u64(2)
      .u8(0x61)
      .u8(0xff)
      .build();
    const f = await parse(b);
    expect(f.metadata['bom']).toBe('\uFEFF');
    expect(f.metadata['bad']).toBe('a\uFFFD');
  });

  it('keeps __proto__ as plain data in a null-prototype object', async () => {
    const b = new RawGguf()
      .header(3, 0, 2)
      .str('__proto__')
      .u32(STR)
      .str('x')
      .str('constructor')
      .u32(U32)
      .u32(1)
      .build();
    const f = await parse(b);
    expect(Object.getPrototypeOf(f.metadata)).toBeNull();
    expect(Object.hasOwn(f.metadata, '__proto__')).toBe(true);
    // biome-ignore lint/suspicious/noProto: a GGUF key named __proto__ must stay plain data
    expect(f.metadata['__proto__']).toBe('x');
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });

  it('honours general.alignment and accepts tensors out of offset order with trailing padding', async () => {
    const r = new RawGguf().header(3, 2, 1).str('general.alignment').u32(U32).u32(64);
    r.tensor('b', [4], GgmlType.F32, 64).tensor('a', [4], GgmlType.F32, 0);
    r.align(64).zeros(128 + 100);
    const f = await parse(r.build());
    expect(f.alignment).toBe(64);
    expect(f.tensorDataOffset % 64).toBe(0);
    expect(f.tensors.map((t) => [t.name, t.offset, t.byteLength])).toEqual([
      ['b', 64, 16],
      ['a', 0, 16],
    ]);
  });

  it('accepts a vocab-only file that ends right after the metadata (no padding)', async () => {
    const b = writeGguf({ metadata: { 'tokenizer.ggml.tokens': ['a', 'b', 'c'] } });
    const f = await parse(b);
    expect(f.fileSize).toBe(b.length);
    expect(f.tensorDataOffset).toBeGreaterThanOrEqual(b.length);
  });

  it('computes tensor sizes from block geometry', async () => {
    const r = new RawGguf()
      .header(3, 1, 0)
      .tensor('q', [64, 3], GgmlType.Q4_K === 12 ? GgmlType.Q4_0 : 0, 0)
      .align(32)
      .zeros(2 * 3 * 18);
    const f = await parse(r.build());
    expect(f.tensors[0]).toEqual({
      name: 'q',
      type: GgmlType.Q4_0,
      shape: [64, 3],
      offset: 0,
      byteLength: 108,
      nElements: 192,
    });
  });
});

describe('parseGguf: incremental reads', () => {
  it('reads only the header region of a file with large tensor data', async () => {
    const big = new Uint8Array(4 * 1024 * 1024);
    const b = writeGguf({ tensors: [{ name: 'w', type: GgmlType.F32, shape: [1024, 1024], data: big }] });
    const src = new CountingSource(b);
    await parseGguf(src);
    expect(src.maxEnd).toBeLessThanOrEqual(1024 * 1024);
  });

  it('grows the window geometrically for a header larger than the first chunk', async () => {
    const tokens = Array.from({ length: 20000 }, (_, i) => `token-${i}`);
    const b = writeGguf({ metadata: { 'tokenizer.ggml.tokens': tokens } });
    const src = new CountingSource(b);
    const f = await parseGguf(src, { limits: { initialChunkBytes: 1024 } });
    expect(f.metadata['tokenizer.ggml.tokens']).toEqual(tokens);
    expect(src.reads.length).toBeLessThan(16);
    expect(src.reads.reduce((n, r) => n + r.length, 0)).toBe(b.length); // each byte read once
  });

  it('rejects with aborted when the signal fires', async () => {
    const ac = new AbortController();
    ac.abort();
    await expectLlmError(parseGguf(new MemoryByteSource(writeGguf(tinyModel())), { signal: ac.signal }), 'aborted');
    const ac2 = new AbortController();
    const b = writeGguf({ metadata: { t: Array.from({ length: 5000 }, (_, i) => `t${i}`) } });
    const src = new CountingSource(b, () => ac2.abort());
    await expectLlmError(parseGguf(src, { signal: ac2.signal, limits: { initialChunkBytes: 256 } }), 'aborted');
  });

  it('refuses a header larger than maxHeaderBytes', async () => {
    const b = writeGguf({ metadata: { s: 'x'.repeat(5000) } });
    await expectLlmError(
      parse(b, { limits: { initialChunkBytes: 512, maxHeaderBytes: 2048 } }),
      'gguf-invalid',
      /maxHeaderBytes/,
    );
  });
});

describe('parseGguf: hostile headers', () => {
  it('rejects a wrong magic', async () => {
    const e = await expectLlmError(
      parse(new TextEncoder().encode('GGML\x03\0\0\0' + '\0'.repeat(16))),
      'gguf-invalid',
      /not a GGUF file/,
    );
    expect(e.details).toMatchObject({ field: 'magic', offset: 0 });
  });

  it('rejects v1, unknown versions and big-endian files', async () => {
    await expectLlmError(parse(new RawGguf().header(1, 0, 0).build()), 'gguf-invalid', /unsupported version 1/);
    await expectLlmError(parse(new RawGguf().header(4, 0, 0).build()), 'gguf-invalid', /unsupported version 4/);
    await expectLlmError(parse(new RawGguf().header(0x03000000, 0, 0).build()), 'gguf-invalid', /big-endian/);
  });

  it('rejects truncation at every byte of a model', async () => {
    const b = writeGguf(tinyModel());
    const full = await parse(b);
    // Trailing padding after the last tensor is optional; everything before its end is required.
    const needed = full.tensorDataOffset + Math.max(...full.tensors.map((t) => t.offset + t.byteLength));
    expect(needed).toBeLessThan(b.length);
    for (let n = 0; n < needed; n++) {
      const e = await expectLlmError(parse(b.subarray(0, n)));
      expect(typeof e.details?.field).toBe('string');
      expect(typeof e.details?.offset).toBe('number');
    }
    await expect(parse(b.subarray(0, needed))).resolves.toBeDefined();
  });

  it('rejects string lengths beyond the file without allocating', async () => {
    const huge = new RawGguf()
      .header(3, 0, 1)
      .u64(2n ** 62n)
      .zeros(32)
      .build();
    const e = await expectLlmError(parse(huge), 'gguf-invalid', /metadata key #0 length/);
    expect(e.details).toMatchObject({ offset: 24 });
    const past = new RawGguf().header(3, 0, 1).u64(1000).raw(new Uint8Array(20)).build();
    await expectLlmError(parse(past), 'gguf-invalid', /runs past the end of the file/);
  });

  it('rejects array lengths beyond the file or the limit', async () => {
    const past = new RawGguf().header(3, 0, 1).str('a').u32(ARR).u32(U32).u64(1_000_000).u32(1).build();
    await expectLlmError(parse(past), 'gguf-invalid', /length of metadata "a".*only \d+ bytes remain/);
    const huge = new RawGguf()
      .header(3, 0, 1)
      .str('a')
      .u32(ARR)
      .u32(STR)
      .u64(2n ** 63n)
      .build();
    await expectLlmError(parse(huge), 'gguf-invalid', /maxArrayLength/);
  });

  it('rejects counts that cannot fit in the file', async () => {
    await expectLlmError(parse(new RawGguf().header(3, 0, 1_000).build()), 'gguf-invalid', /metadata kv count/);
    await expectLlmError(parse(new RawGguf().header(3, 2n ** 63n, 0).build()), 'gguf-invalid', /tensor count/);
  });

  it('rejects unknown value types, deep nesting and mixed nested arrays', async () => {
    await expectLlmError(
      parse(new RawGguf().header(3, 0, 1).str('k').u32(13).u32(0).build()),
      'gguf-invalid',
      /unknown value type 13/,
    );
    await expectLlmError(
      parse(new RawGguf().header(3, 0, 1).str('k').u32(ARR).u32(99).u64(0).build()),
      'gguf-invalid',
      /unknown value type 99/,
    );
    const deep = new RawGguf().header(3, 0, 1).str('k').u32(ARR);
    for (let i = 0; i < 20; i++) deep.u32(ARR).u64(1);
    deep.u32(U32).u64(0);
    await expectLlmError(parse(deep.build()), 'gguf-invalid', /maxArrayDepth/);
    const mixed = new RawGguf()
      .header(3, 0, 1)
      .str('k')
      .u32(ARR)
      .u32(ARR)
      .u64(2)
      .u32(U32)
      .u64(0)
      .u32(STR)
      .u64(0)
      .build();
    await expectLlmError(parse(mixed), 'gguf-invalid', /different element types/);
  });

  it('rejects duplicate keys and duplicate tensor names', async () => {
    const dupKey = new RawGguf().header(3, 0, 2).str('k').u32(U32).u32(1).str('k').u32(U32).u32(2).build();
    await expectLlmError(parse(dupKey), 'gguf-invalid', /duplicate key "k"/);
    const dupT = new RawGguf()
      .header(3, 2, 0)
      .tensor('t', [4], 0, 0)
      .tensor('t', [4], 0, 32)
      .align(32)
      .zeros(64)
      .build();
    await expectLlmError(parse(dupT), 'gguf-invalid', /duplicate tensor name "t"/);
  });

  it('shortens file-supplied names in messages', async () => {
    const long = 'k'.repeat(100_000);
    const b = new RawGguf().header(3, 0, 2).str(long).u32(U32).u32(1).str(long).u32(U32).u32(2).build();
    const e = await expectLlmError(parse(b), 'gguf-invalid', /duplicate key "k+…\(100000 chars\)"/);
    expect(e.message.length).toBeLessThan(300);
  });

  it('rejects bad n_dims, zero dims and element-count overflow', async () => {
    const body = (shape: (number | bigint)[], type = 0) =>
      new RawGguf().header(3, 1, 0).tensor('t', shape, type, 0).align(32).zeros(64).build();
    await expectLlmError(parse(body([])), 'gguf-invalid', /n_dims is 0/);
    await expectLlmError(parse(body([1, 1, 1, 1, 1])), 'gguf-invalid', /n_dims is 5/);
    await expectLlmError(parse(body([4, 0])), 'gguf-invalid', /dim 1.*dimension is 0/);
    await expectLlmError(parse(body([2n ** 31n, 2n ** 31n, 2n ** 31n])), 'gguf-invalid', /overflows 2\^53/);
    await expectLlmError(parse(body([2n ** 64n - 1n])), 'gguf-invalid', /dimension is/);
    await expectLlmError(parse(body([16], GgmlType.Q4_0)), 'gguf-invalid', /not a multiple of the Q4_0 block size 32/);
  });

  it('rejects an unknown tensor type id only when a tensor uses it', async () => {
    const used = new RawGguf().header(3, 1, 0).tensor('t', [4], 4, 0).align(32).zeros(64).build();
    const e = await expectLlmError(parse(used), 'gguf-invalid', /unknown ggml type id 4/);
    expect(e.details).toMatchObject({ value: 4 });
    const meta = new RawGguf().header(3, 0, 1).str('general.file_type').u32(U32).u32(4).build();
    await expect(parse(meta)).resolves.toBeDefined();
  });

  it('rejects tensor data outside the file, misaligned and overlapping tensors', async () => {
    const one = (offset: number | bigint, extra = 16) =>
      new RawGguf().header(3, 1, 0).tensor('t', [4], 0, offset).align(32).zeros(extra).build();
    await expectLlmError(parse(one(0, 8)), 'gguf-invalid', /outside the file/);
    await expectLlmError(parse(one(2n ** 40n)), 'gguf-invalid', /outside the file/);
    await expectLlmError(parse(one(2n ** 60n)), 'gguf-invalid', /offset/);
    await expectLlmError(parse(one(8, 64)), 'gguf-invalid', /not a multiple of the alignment 32/);
    const overlap = new RawGguf()
      .header(3, 2, 0)
      .tensor('a', [16], 0, 0)
      .tensor('b', [4], 0, 32)
      .align(32)
      .zeros(128)
      .build();
    await expectLlmError(parse(overlap), 'gguf-invalid', /overlaps tensor "a"/);
  });

  it('rejects a bad general.alignment', async () => {
    const withAlign = (type: number, write: (r: RawGguf) => RawGguf) =>
      write(new RawGguf().header(3, 0, 1).str('general.alignment').u32(type)).build();
    for (const v of [0, 3, 48, 2 ** 31]) {
      const e = await expectLlmError(parse(withAlign(U32, (r) => r.u32(v))), 'gguf-invalid', /general.alignment/);
      expect(e.details).toMatchObject({ field: 'general.alignment', offset: 24 + 8 + 17 + 4 });
    }
    await expectLlmError(parse(withAlign(GgufValueType.FLOAT32, (r) => r.f32(32))), 'gguf-invalid', /power of two/);
    await expectLlmError(parse(withAlign(STR, (r) => r.str('32'))), 'gguf-invalid', /power of two/);
  });

  it('names field and offset in every error', async () => {
    const e = await expectLlmError(parse(new RawGguf().header(3, 1, 0).tensor('t', [1, 2, 3, 4, 5], 0, 0).build()));
    expect(e.details).toMatchObject({ field: 'tensor #0 ("t") n_dims', offset: 24 + 9 });
    expect(e).toBeInstanceOf(LlmError);
    expect(e.message).toContain('byte offset 33');
  });
});
