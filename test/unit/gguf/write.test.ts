/**
 * writeGguf: parse(write(x)) reproduces x for every value type (explicit and inferred), nested arrays, tensors of
 * several ggml types, custom alignment, explicit offsets and v2; bad writer input is `invalid-request`.
 */

import { describe, expect, it } from 'vitest';
import {
  GgmlType,
  type GgufValueType,
  type GgufValue,
  type GgufValueTypeInfo,
  type GgufWriteInput,
  ggufType,
  inferValueType,
  parseGguf,
  writeGguf,
  writeGgufChunks,
} from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { expectLlmError, tinyModel } from './gguf-test-kit.js';

const roundTrip = (x: GgufWriteInput) => parseGguf(new MemoryByteSource(writeGguf(x)));

/** Values as plain JS for comparison: the parser gives numeric/bool arrays as typed arrays (bools as 0/1). */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/** `plain`, with booleans inside arrays as 0/1 (the decoded form of ARRAY<BOOL>). */
function plainArrays(v: unknown, inArray = false): unknown {
  if (Array.isArray(v)) return v.map((x) => plainArrays(x, true));
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>);
  if (typeof v === 'boolean' && inArray) return v ? 1 : 0;
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainArrays(x)]));
  return v;
}

/** One value of every type, explicit types. */
const EVERY_TYPE: [string, GgufValueTypeInfo, GgufValue][] = [
  ['u8', ggufType.UINT8, 255],
  ['i8', ggufType.INT8, -128],
  ['u16', ggufType.UINT16, 65535],
  ['i16', ggufType.INT16, -32768],
  ['u32', ggufType.UINT32, 4294967295],
  ['i32', ggufType.INT32, -2147483648],
  ['f32', ggufType.FLOAT32, Math.fround(3.14)],
  ['bool', ggufType.BOOL, false],
  ['str', ggufType.STRING, 'ünïcødé ✓ \u0000 end'],
  ['u64', ggufType.UINT64, 18446744073709551615n],
  ['i64', ggufType.INT64, -9223372036854775808n],
  ['f64', ggufType.FLOAT64, 0.1],
  ['arr_u8', ggufType.array(ggufType.UINT8), [0, 1, 255]],
  ['arr_str', ggufType.array(ggufType.STRING), ['a', '', 'ccc']],
  ['arr_bool', ggufType.array(ggufType.BOOL), [true, false]],
  ['arr_i64', ggufType.array(ggufType.INT64), [1n, -1n]],
  ['arr_f32', ggufType.array(ggufType.FLOAT32), [0.5, -2, Infinity]],
  ['arr_empty', ggufType.array(ggufType.FLOAT64), []],
  ['nested', ggufType.array(ggufType.array(ggufType.STRING)), [['a'], [], ['b', 'c']]],
  ['nested3', ggufType.array(ggufType.array(ggufType.array(ggufType.INT16))), [[[1, -2]], [[], [3]]]],
];

describe('writeGguf round trip', () => {
  it('reproduces every value type with explicit types', async () => {
    const metadata = Object.fromEntries(EVERY_TYPE.map(([k, , v]) => [k, v]));
    const metadataTypes = Object.fromEntries(EVERY_TYPE.map(([k, t]) => [k, t]));
    for (const version of [2, 3] as const) {
      const f = await roundTrip({ version, metadata, metadataTypes });
      expect(f.version).toBe(version);
      expect(plainArrays({ ...f.metadata })).toEqual(plainArrays(metadata));
      expect({ ...f.metadataTypes }).toEqual(metadataTypes);
      expect(Object.keys(f.metadata)).toEqual(EVERY_TYPE.map(([k]) => k)); // file order kept
    }
  });

  it('infers types like gguf-py', () => {
    expect(inferValueType(7)).toEqual(ggufType.UINT32);
    expect(inferValueType(-7)).toEqual(ggufType.INT32);
    expect(inferValueType(2 ** 40)).toEqual(ggufType.FLOAT64);
    expect(inferValueType(0.25)).toEqual(ggufType.FLOAT32);
    expect(inferValueType(5n)).toEqual(ggufType.INT64);
    expect(inferValueType(2n ** 63n)).toEqual(ggufType.UINT64);
    expect(inferValueType(true)).toEqual(ggufType.BOOL);
    expect(inferValueType(['x'])).toEqual(ggufType.array(ggufType.STRING));
    expect(inferValueType([1, 2])).toEqual(ggufType.array(ggufType.INT32));
    expect(inferValueType([1, 2 ** 31])).toEqual(ggufType.array(ggufType.UINT32));
    expect(inferValueType([1, 0.5])).toEqual(ggufType.array(ggufType.FLOAT32));
    expect(inferValueType([[1], []])).toEqual(ggufType.array(ggufType.array(ggufType.INT32)));
    expect(() => inferValueType([1, 'a'])).toThrow(/mixes/);
  });

  it('reproduces inferred values exactly when they are representable', async () => {
    const metadata = {
      a: 1,
      b: -1,
      c: 0.5,
      d: 'x',
      e: true,
      f: [1, 2, 3],
      g: ['p', 'q'],
      h: [[0.5], [1.5]],
      big: 2 ** 40,
      n: 5n,
    };
    const f = await roundTrip({ metadata });
    expect(plain({ ...f.metadata })).toEqual(metadata);
  });

  it('reproduces tensors, offsets and sizes', async () => {
    const model = tinyModel();
    const f = await roundTrip(model);
    expect(f.tensors.map((t) => ({ name: t.name, type: t.type, shape: t.shape }))).toEqual(
      model.tensors!.map((t) => ({ name: t.name, type: t.type, shape: t.shape })),
    );
    const bytes = writeGguf(model);
    for (const [i, t] of f.tensors.entries()) {
      expect(t.offset % f.alignment).toBe(0);
      const data = bytes.subarray(f.tensorDataOffset + t.offset, f.tensorDataOffset + t.offset + t.byteLength);
      expect(data).toEqual(model.tensors![i].data);
    }
  });

  it('uses general.alignment and explicit offsets (tensor table out of offset order)', async () => {
    const t = (name: string, offset: number) => ({
      name,
      type: GgmlType.F32,
      shape: [4],
      data: new Uint8Array(16).fill(offset & 0xff),
      offset,
    });
    const input: GgufWriteInput = {
      metadata: { 'general.alignment': 64 },
      tensors: [t('second', 128), t('first', 0)],
    };
    const bytes = writeGguf(input);
    const f = await parseGguf(new MemoryByteSource(bytes));
    expect(f.alignment).toBe(64);
    expect(f.tensorDataOffset % 64).toBe(0);
    expect(f.tensors.map((x) => [x.name, x.offset])).toEqual([
      ['second', 128],
      ['first', 0],
    ]);
    expect(bytes[f.tensorDataOffset + 128]).toBe(128);
    expect(bytes.length % 64).toBe(0);
  });

  it('streams the same bytes in chunks', () => {
    const chunks = [...writeGgufChunks(tinyModel())];
    expect(chunks.length).toBeGreaterThan(1);
    const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      joined.set(c, at);
      at += c.length;
    }
    expect(joined).toEqual(writeGguf(tinyModel()));
  });

  it('writes a vocab-only file without trailing padding', () => {
    const b = writeGguf({ metadata: { k: 'abc' } });
    expect(b.length).toBe(24 + 8 + 1 + 4 + 8 + 3);
  });
});

describe('writeGguf rejects bad input', () => {
  const f32 = (name: string, shape: number[], bytes: number) => ({
    name,
    type: GgmlType.F32,
    shape,
    data: new Uint8Array(bytes),
  });
  it.each([
    ['value out of range', { metadata: { k: 300 }, metadataTypes: { k: ggufType.UINT8 } }, /outside 0..255/],
    ['wrong JS type', { metadata: { k: 'x' }, metadataTypes: { k: ggufType.UINT32 } }, /not an integer/],
    ['bigint for 32-bit', { metadata: { k: 1n }, metadataTypes: { k: ggufType.UINT32 } }, /bigint/],
    ['array element', { metadata: { k: [1, 'x'] }, metadataTypes: { k: ggufType.array(ggufType.INT32) } }, /k"\[1\]/],
    ['data size', { tensors: [f32('t', [4], 15)] }, /needs 16/],
    ['duplicate tensor', { tensors: [f32('t', [4], 16), f32('t', [4], 16)] }, /duplicate/],
    ['bad shape', { tensors: [f32('t', [0], 0)] }, /1–4 positive integer dims/],
    [
      'block size',
      { tensors: [{ name: 'q', type: GgmlType.Q8_0, shape: [16], data: new Uint8Array(17) }] },
      /block size 32/,
    ],
    ['bad alignment', { metadata: { 'general.alignment': 24 } }, /power of two/],
    [
      'unknown type',
      { metadata: { k: 1 }, metadataTypes: { k: { type: 99 as GgufValueType.UINT8 } } },
      /unknown value type/,
    ],
  ] as [string, GgufWriteInput, RegExp][])('%s', async (_name, input, message) => {
    await expectLlmError(
      Promise.resolve().then(() => writeGguf(input)),
      'invalid-request',
      message,
    );
  });
});
