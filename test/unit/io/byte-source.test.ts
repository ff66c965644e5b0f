/**
 * Every `ByteSource` implementation behaves the same (table-driven): exact bytes at any offset, zero-length reads,
 * `gguf-invalid` for out-of-range reads, `aborted` for an aborted signal, `invalid-request` after close. Plus the
 * implementation-specific edges (missing path, directory, Blob never read whole) and `openModelSource`'s dispatch.
 */

import 'fake-indexeddb/auto';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { createStore } from 'idb-keyval';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlobByteSource } from '../../../src/io/blob-source.js';
import { type ByteSource, MemoryByteSource } from '../../../src/io/byte-source.js';
import { HttpByteSource } from '../../../src/io/http-source.js';
import { IdbByteSource } from '../../../src/io/idb-byte-source.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { openModelSource } from '../../../src/io/index.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { SHARED_DIR, sharedPath } from '../../helpers/shared-path.js';

const FIXTURE_PATH = sharedPath('models', 'stories260K.gguf');
const FIXTURE = new Uint8Array(readFileSync(FIXTURE_PATH));
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

/** Sources opened by the current test; closed after it (file handles must not be left to the GC). */
const opened: ByteSource[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close?.()));
});
const track = <T extends ByteSource>(source: T): T => {
  opened.push(source);
  return source;
};

const SOURCES: { name: string; open: () => Promise<ByteSource> }[] = [
  { name: 'MemoryByteSource', open: async () => new MemoryByteSource(FIXTURE, 'fixture') },
  { name: 'NodeFileSource', open: () => NodeFileSource.open(FIXTURE_PATH) },
  { name: 'BlobByteSource', open: async () => new BlobByteSource(new Blob([FIXTURE])) },
  {
    name: 'HttpByteSource',
    open: () => HttpByteSource.open(server.url('/models/stories260K.gguf'), { chunkBytes: 100_000 }),
  },
];

describe.each(SOURCES)('$name', ({ name, open: openSource }) => {
  const open = async (): Promise<ByteSource> => track(await openSource());
  it('reads exact bytes at any offset, including zero-length reads', async () => {
    const source = await open();
    expect(source.size).toBe(FIXTURE.byteLength);
    for (const [offset, length] of [
      [0, 8],
      [0, 0],
      [FIXTURE.byteLength, 0],
      [77_777, 123_456],
      [FIXTURE.byteLength - 1, 1],
    ]) {
      const bytes = await source.read(offset, length);
      expect(bytes.byteLength).toBe(length);
      expect(sha(bytes)).toBe(sha(FIXTURE.subarray(offset, offset + length)));
    }
    expect(sha(await source.read(0, source.size))).toBe(sha(FIXTURE));
  });

  it('rejects out-of-range reads with gguf-invalid', async () => {
    const source = await open();
    for (const [offset, length] of [
      [-1, 1],
      [0, FIXTURE.byteLength + 1],
      [FIXTURE.byteLength, 1],
      [1.5, 2],
      [0, -1],
      [2 ** 53, 1],
    ]) {
      const e = await llmError(source.read(offset, length));
      expect(e.code).toBe('gguf-invalid');
      expect(e.details).toMatchObject({ offset, length, size: FIXTURE.byteLength });
    }
  });

  it('rejects with aborted when the signal is already aborted', async () => {
    const source = await open();
    const controller = new AbortController();
    controller.abort();
    expect((await llmError(source.read(0, 4, controller.signal))).code).toBe('aborted');
  });

  it.skipIf(name === 'MemoryByteSource')('rejects reads after close', async () => {
    const source = await open();
    await source.close?.();
    expect((await llmError(source.read(0, 4))).code).toBe('invalid-request');
  });
});

describe('source-specific edges', () => {
  it('NodeFileSource: a missing path or a directory is invalid-request naming the path', async () => {
    const missing = await llmError(NodeFileSource.open('/nonexistent/model.gguf'));
    expect(missing.code).toBe('invalid-request');
    expect(missing.message).toContain('/nonexistent/model.gguf');
    expect(missing.details?.errno).toBe('ENOENT');
    expect((await llmError(NodeFileSource.open(SHARED_DIR))).code).toBe('invalid-request');
  });

  it('BlobByteSource: reads through slices only, never the whole blob', async () => {
    const blob = new Blob([FIXTURE]);
    const sliced: [number, number][] = [];
    const spy = {
      size: blob.size,
      slice: (a?: number, b?: number) => {
        sliced.push([a ?? 0, b ?? blob.size]);
        return blob.slice(a, b);
      },
      arrayBuffer: () => Promise.reject(new Error('whole-blob read')),
    } as unknown as Blob;
    const source = new BlobByteSource(spy, 'picked.gguf');
    expect(source.name).toBe('picked.gguf');
    expect(sha(await source.read(1000, 2000))).toBe(sha(FIXTURE.subarray(1000, 3000)));
    expect(sliced).toEqual([[1000, 3000]]);
  });

  it('BlobByteSource: readInto fills the target and releases the slice it read at once', async () => {
    const slices: ArrayBuffer[] = [];
    const blob = new Blob([FIXTURE]);
    const spy = {
      size: blob.size,
      slice: (a?: number, b?: number) => {
        const part = blob.slice(a, b);
        return { size: part.size, arrayBuffer: () => part.arrayBuffer().then((x) => (slices.push(x), x)) };
      },
    } as unknown as Blob;
    const source = new BlobByteSource(spy);
    const dst = new Uint8Array(3000);
    await source.readInto(500, dst.subarray(1000, 3000));
    expect(sha(dst.subarray(1000))).toBe(sha(FIXTURE.subarray(500, 2500)));
    expect(dst.subarray(0, 1000).every((b) => b === 0)).toBe(true);
    expect(slices.map((b) => b.byteLength)).toEqual([0]); // transferred away (detached): its memory freed now
    expect((await llmError(source.readInto(FIXTURE.byteLength, new Uint8Array(1)))).code).toBe('gguf-invalid');
  });
});

describe('openModelSource', () => {
  const store = createStore('webgguf-open-test', 'models');
  const url = (): string => server.url('/models/stories260K.gguf');
  const cases: { name: string; input: () => string | URL | Blob; options?: object; kind: unknown }[] = [
    { name: 'a Node path → NodeFileSource', input: () => FIXTURE_PATH, kind: NodeFileSource },
    { name: 'a file: URL → NodeFileSource', input: () => pathToFileURL(FIXTURE_PATH), kind: NodeFileSource },
    { name: 'a Blob → BlobByteSource', input: () => new Blob([FIXTURE]), kind: BlobByteSource },
    { name: 'a URL with cache off → HttpByteSource', input: url, options: { cache: false }, kind: HttpByteSource },
    {
      name: 'a URL with IndexedDB → IdbByteSource (downloaded into the store)',
      input: () => new URL(url()),
      options: { store },
      kind: IdbByteSource,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const source = track(await openModelSource(c.input(), { chunkBytes: 256 * 1024, ...c.options }));
      expect(source).toBeInstanceOf(c.kind);
      expect(sha(await source.read(0, source.size))).toBe(sha(FIXTURE));
      await source.close?.();
    });
  }

  it('an unsupported scheme is invalid-request', async () => {
    expect((await llmError(openModelSource('ftp://example.com/m.gguf'))).code).toBe('invalid-request');
  });
});
