/**
 * Header parsing is linear and bounded (issue #21 item 4): numeric arrays decode to typed arrays (1 byte per u8, not
 * an 8-byte JS slot), a fixed-size array is read once its `count × size` bytes are loaded (no restart of the key per
 * buffer growth), and the abort signal is honoured inside a long value (the parser yields to the event loop).
 * Time bounds are generous hang checks, not speed tests.
 */

import { describe, expect, it } from 'vitest';
import { GgufValueType, parseGguf, writeGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { CountingSource, expectLlmError } from './gguf-test-kit.js';

const enc = new TextEncoder();

/** A header-only GGUF whose one key holds an array of `n` elements of `elemType` (`elemSize` bytes each, zeros). */
function bigArrayHeader(key: string, elemType: number, elemSize: number, n: number): Uint8Array {
  const name = enc.encode(key);
  const head = 4 + 4 + 8 + 8 + 8 + name.length + 4 + 4 + 8;
  const out = new Uint8Array(head + n * elemSize);
  const dv = new DataView(out.buffer);
  out.set([0x47, 0x47, 0x55, 0x46]);
  dv.setUint32(4, 3, true);
  dv.setBigUint64(8, 0n, true); // tensors
  dv.setBigUint64(16, 1n, true); // kv
  dv.setBigUint64(24, BigInt(name.length), true);
  out.set(name, 32);
  let at = 32 + name.length;
  dv.setUint32(at, GgufValueType.ARRAY, true);
  dv.setUint32(at + 4, elemType, true);
  dv.setBigUint64(at + 8, BigInt(n), true);
  at += 16;
  for (let i = 0; i < n * elemSize; i += 4099) out[at + i] = i & 0xff; // a few non-zero bytes to check placement
  return out;
}

/** A header-only GGUF whose one key is an array of `n` one-byte strings. */
function stringArrayHeader(n: number): Uint8Array {
  const key = enc.encode('strings');
  const out = new Uint8Array(32 + key.length + 16 + n * 9);
  const dv = new DataView(out.buffer);
  out.set([0x47, 0x47, 0x55, 0x46]);
  dv.setUint32(4, 3, true);
  dv.setBigUint64(16, 1n, true);
  dv.setBigUint64(24, BigInt(key.length), true);
  out.set(key, 32);
  let at = 32 + key.length;
  dv.setUint32(at, GgufValueType.ARRAY, true);
  dv.setUint32(at + 4, GgufValueType.STRING, true);
  dv.setBigUint64(at + 8, BigInt(n), true);
  at += 16;
  for (let i = 0; i < n; i++, at += 9) {
    dv.setBigUint64(at, 1n, true);
    out[at + 8] = 0x61 + (i % 26);
  }
  return out;
}

describe('header parsing cost', () => {
  it('parses a 64 MiB u8 array as one Uint8Array, in few reads, fast and with bounded heap', async () => {
    const n = 64 * 1024 * 1024;
    const bytes = bigArrayHeader('big', GgufValueType.UINT8, 1, n);
    const source = new CountingSource(bytes);
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    const f = await parseGguf(source);
    const ms = performance.now() - t0;
    const heapGrowth = process.memoryUsage().heapUsed - heap0;
    const v = f.metadata['big'];
    expect(v).toBeInstanceOf(Uint8Array);
    expect((v as Uint8Array).length).toBe(n);
    expect((v as Uint8Array)[4099]).toBe(4099 & 0xff);
    expect(ms).toBeLessThan(10_000);
    expect(heapGrowth).toBeLessThan(48 * 1024 * 1024); // a JS array would be 512 MiB of heap
    expect(source.reads.length).toBeLessThanOrEqual(3); // first chunk, then everything count × size needs
    expect(source.reads.reduce((s, r) => s + r.length, 0)).toBe(bytes.length); // each byte read once
  }, 60_000);

  it('decodes every numeric element type to its typed array (bools as 0/1) and writes them back', async () => {
    const cases: [number, new (xs: number[]) => ArrayLike<unknown>, unknown[]][] = [
      [GgufValueType.UINT8, Uint8Array as never, [0, 255]],
      [GgufValueType.INT8, Int8Array as never, [-128, 127]],
      [GgufValueType.UINT16, Uint16Array as never, [0, 65535]],
      [GgufValueType.INT16, Int16Array as never, [-32768, 7]],
      [GgufValueType.UINT32, Uint32Array as never, [0, 4294967295]],
      [GgufValueType.INT32, Int32Array as never, [-1, 2 ** 31 - 1]],
      [GgufValueType.FLOAT32, Float32Array as never, [1.5, -Infinity]],
      [GgufValueType.FLOAT64, Float64Array as never, [Math.PI, NaN]],
      [GgufValueType.UINT64, BigUint64Array as never, [0n, 2n ** 64n - 1n]],
      [GgufValueType.INT64, BigInt64Array as never, [-(2n ** 63n), 5n]],
    ];
    for (const [type, Ctor, values] of cases) {
      const bytes = writeGguf({
        metadata: { k: values as never },
        metadataTypes: { k: { type: GgufValueType.ARRAY, element: { type } } },
      });
      const f = await parseGguf(new MemoryByteSource(bytes));
      expect(f.metadata['k'], GgufValueType[type]).toBeInstanceOf(Ctor);
      expect(Array.from(f.metadata['k'] as ArrayLike<unknown>)).toEqual(values);
      // Round trip from the typed array itself.
      const again = await parseGguf(
        new MemoryByteSource(writeGguf({ metadata: f.metadata, metadataTypes: f.metadataTypes })),
      );
      expect(again.metadata['k']).toEqual(f.metadata['k']);
    }
    const bools = writeGguf({ metadata: { b: [true, false, true] } });
    const fb = await parseGguf(new MemoryByteSource(bools));
    expect(fb.metadata['b']).toEqual(Uint8Array.from([1, 0, 1]));
    expect(fb.metadataTypes['b']).toEqual({ type: GgufValueType.ARRAY, element: { type: GgufValueType.BOOL } });
  });

  it('reads a long string array in few reads, whatever the first chunk size (no restart per growth)', async () => {
    const bytes = stringArrayHeader(200_000);
    const source = new CountingSource(bytes);
    const f = await parseGguf(source, { limits: { initialChunkBytes: 4096 } });
    expect((f.metadata['strings'] as string[]).length).toBe(200_000);
    expect((f.metadata['strings'] as string[])[27]).toBe('b');
    expect(source.reads.reduce((s, r) => s + r.length, 0)).toBe(bytes.length);
    expect(source.reads.length).toBeLessThan(16); // geometric growth
  });

  it('honours an abort that arrives while a long array is being decoded', async () => {
    const bytes = stringArrayHeader(3_000_000);
    const controller = new AbortController();
    const t0 = performance.now();
    setTimeout(() => controller.abort(), 20);
    await expectLlmError(parseGguf(new MemoryByteSource(bytes), { signal: controller.signal }), 'aborted');
    expect(performance.now() - t0).toBeLessThan(5_000);
  }, 30_000);
});
