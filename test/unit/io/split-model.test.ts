/**
 * Issue #20, split GGUF: a model cut by (a deterministic stand-in for) llama.cpp's gguf-split loads from the parts —
 * a Node path of the first part, `File[]`, the first part's URL through the IndexedDB model store — as one model whose
 * tensors are byte-identical to the unsplit file and whose greedy output equals llama.cpp's; bad sets (missing part,
 * another split.count, parts of different models, wrong order) are clear errors and leave nothing in the store.
 */

import 'fake-indexeddb/auto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type UseStore, createStore } from 'idb-keyval';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { LlmError } from '../../../src/errors.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgufValueType } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { type ByteSource, deleteSplitModel, listModels, openModelSource } from '../../../src/io/index.js';
import { SplitByteSource } from '../../../src/io/split-source.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { splitGguf, splitNames } from '../../helpers/gguf-splitter.js';
import { runCliCaptured } from '../../helpers/run-cli.js';
import { sharedPath } from '../../helpers/shared-path.js';

const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const REF = JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as {
  prompt: string;
  greedy_kv_f32: { text: string };
};

let dir: string;
let server: FaultServer;
let storeCount = 0;
const freshStore = (): UseStore => createStore(`split-test-${storeCount++}`, 'models');

/** Writes `parts` as `${stem}-0000i-of-0000N.gguf` into the temp folder; returns their paths. */
function writeParts(stem: string, parts: readonly Uint8Array[]): string[] {
  return splitNames(stem, parts.length).map((name, i) => {
    const path = join(dir, name);
    writeFileSync(path, parts[i]);
    return path;
  });
}

/** Every tensor of `source` (parsed) has the same bytes as in the unsplit fixture. */
async function expectSameTensors(source: ByteSource, sameKeys = true): Promise<void> {
  const whole = await parseGguf(new MemoryByteSource(FIXTURE));
  const merged = await parseGguf(source);
  expect(merged.tensors.map((t) => t.name)).toEqual(whole.tensors.map((t) => t.name));
  if (sameKeys) expect(Object.keys(merged.metadata)).toEqual(Object.keys(whole.metadata));
  for (const [i, t] of whole.tensors.entries()) {
    const m = merged.tensors[i];
    expect(m.shape).toEqual(t.shape);
    const expected = FIXTURE.subarray(
      whole.tensorDataOffset + t.offset,
      whole.tensorDataOffset + t.offset + t.byteLength,
    );
    expectBytes(await source.read(merged.tensorDataOffset + m.offset, m.byteLength), expected);
  }
}

/** Byte equality without vitest's element-by-element diff (slow on large arrays). */
function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(
    Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(
      Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
    ),
  ).toBe(true);
}

async function rejection(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(LlmError);
  return e as LlmError;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'webgguf-split-'));
  server = await startFaultServer({ '/': dir });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('split GGUF', () => {
  it('a Node path of the first part opens the merged model: same tensors, metadata without split keys, greedy = llama.cpp', async () => {
    const [first] = writeParts('path', await splitGguf(FIXTURE, 3));
    const source = await openModelSource(first);
    expect(source).toBeInstanceOf(SplitByteSource);
    expect((source as SplitByteSource).partInfo.map((p) => p.tensorCount).reduce((a, b) => a + b)).toBe(
      (await parseGguf(new MemoryByteSource(FIXTURE))).tensors.length,
    );
    await expectSameTensors(source);
    await source.close?.();
    const engine = await createEngine({ model: first, backend: 'cpu', contextLength: 128, warmup: false });
    const r = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    expect(r.choices[0].text).toBe(REF.greedy_kv_f32.text);
    await engine.unload();
  });

  it('File[] in order loads; no tensors in the first part and per-part alignments are handled', async () => {
    const parts = await splitGguf(FIXTURE, 4, { noTensorsInFirst: true, laterAlignment: 64 });
    const files = splitNames('files', 4).map((n, i) => new File([parts[i]], n));
    await expectSameTensors(await openModelSource(files));
    // A first part with a larger alignment than the others: the merged view uses the smallest.
    const wide = await splitGguf(FIXTURE, 3, {
      overrides: {
        0: { metadata: { 'general.alignment': 64 }, types: { 'general.alignment': { type: GgufValueType.UINT32 } } },
      },
    });
    const wideSource = await openModelSource(wide.map((b) => new Blob([b])));
    await expectSameTensors(wideSource, false);
    expect((await parseGguf(wideSource)).alignment).toBe(32);
    const engine = await createEngine({ model: files, backend: 'cpu', contextLength: 128, warmup: false });
    const r = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    expect(r.choices[0].text).toBe(REF.greedy_kv_f32.text);
    await engine.unload();
  });

  it('the first part URL downloads every part into the store as one set, then loads with no request', async () => {
    const paths = writeParts('url', await splitGguf(FIXTURE, 3));
    const store = freshStore();
    const url = server.url('/' + splitNames('url', 3)[0]);
    const progress: number[] = [];
    const source = await openModelSource(url, {
      store,
      chunkBytes: 64 * 1024,
      onProgress: (p) => {
        if (p.phase === 'download') progress.push(p.loadedBytes);
      },
    });
    await expectSameTensors(source);
    const listed = await listModels({ store });
    expect(listed.map((m) => m.split?.part).sort()).toEqual([1, 2, 3]);
    expect(listed.every((m) => m.complete && m.split?.first === url && m.split.count === 3)).toBe(true);
    expect(progress.at(-1)).toBe(paths.reduce((n, p) => n + readFileSync(p).byteLength, 0));
    const before = server.requests.length;
    await expectSameTensors(await openModelSource(url, { store }));
    expect(server.requests.length).toBe(before);
    expect(await deleteSplitModel(url, { store })).toBe(3);
    expect(await listModels({ store })).toEqual([]);
  });

  it('an interrupted download keeps its parts and resumes: the second attempt fetches only what is missing', async () => {
    const paths = writeParts('resume', await splitGguf(FIXTURE, 3));
    const total = paths.reduce((n, p) => n + readFileSync(p).byteLength, 0);
    const store = freshStore();
    const url = server.url('/' + splitNames('resume', 3)[0]);
    const abort = new AbortController();
    const sent = (): number =>
      server.requests.filter((r) => r.path.startsWith('/resume-')).reduce((n, r) => n + r.bytesSent, 0);
    const e = await rejection(
      openModelSource(url, {
        store,
        chunkBytes: 32 * 1024,
        signal: abort.signal,
        onProgress: (p) => {
          if (p.phase === 'download' && p.loadedBytes > total / 2) abort.abort();
        },
      }),
    );
    expect(e.code).toBe('aborted');
    const kept = await listModels({ store });
    expect(kept.length).toBeGreaterThan(0);
    const before = sent();
    await expectSameTensors(await openModelSource(url, { store, chunkBytes: 32 * 1024 }));
    expect(sent() - before).toBeLessThan(total * 0.75);
  });

  it('createEngine from the first part URL (default store) plans from every header, downloads and answers like llama.cpp', async () => {
    writeParts('engine', await splitGguf(FIXTURE, 2));
    const url = server.url('/' + splitNames('engine', 2)[0]);
    const engine = await createEngine({ model: url, backend: 'cpu', contextLength: 128, warmup: false });
    const r = await engine.completions.create({ prompt: REF.prompt, temperature: 0, max_tokens: 30 });
    expect(r.choices[0].text).toBe(REF.greedy_kv_f32.text);
    await engine.unload();
    expect(await deleteSplitModel(url)).toBe(2);
  });

  it('a missing part is a network error and nothing stays stored', async () => {
    const paths = writeParts('missing', await splitGguf(FIXTURE, 3));
    rmSync(paths[2]);
    const store = freshStore();
    const e = await rejection(
      openModelSource(server.url('/' + splitNames('missing', 3)[0]), { store, chunkBytes: 64 * 1024 }),
    );
    expect(e.code).toBe('network');
    expect(e.details?.status).toBe(404);
    expect(await listModels({ store })).toEqual([]);
    expect((await rejection(openModelSource(paths[0]))).message).toMatch(/missing|no such|not found|ENOENT/i);
  });

  it('a part with another split.count is gguf-invalid and nothing stays stored', async () => {
    writeParts('count', await splitGguf(FIXTURE, 3, { overrides: { 1: { metadata: { 'split.count': 4 } } } }));
    const store = freshStore();
    const e = await rejection(
      openModelSource(server.url('/' + splitNames('count', 3)[0]), { store, chunkBytes: 64 * 1024 }),
    );
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toMatch(/split\.count = 4/);
    expect(e.details).toMatchObject({ reason: 'split', part: 2 });
    expect(await listModels({ store })).toEqual([]);
  });

  it('parts of different models (tensor count, metadata) are gguf-invalid', async () => {
    const names = splitNames('mixed', 3);
    const tensors = await splitGguf(FIXTURE, 3, { overrides: { 2: { metadata: { 'split.tensors.count': 99 } } } });
    const e1 = await rejection(openModelSource(tensors.map((b, i) => new File([b], names[i]))));
    expect(e1.message).toMatch(/different models/);
    const arch = await splitGguf(FIXTURE, 3, {
      overrides: {
        1: {
          metadata: { 'general.architecture': 'gemma' },
          types: { 'general.architecture': { type: GgufValueType.STRING } },
        },
      },
    });
    const e2 = await rejection(openModelSource(arch.map((b, i) => new File([b], names[i]))));
    expect(e2.code).toBe('gguf-invalid');
    expect(e2.message).toMatch(/general\.architecture/);
    // A part from another split of the same model: the tensor total no longer adds up (or a tensor repeats).
    const other = await splitGguf(FIXTURE, 3, { noTensorsInFirst: true });
    const e3 = await rejection(
      openModelSource([tensors[0], other[1], tensors[2]].map((b, i) => new File([b], names[i]))),
    );
    expect(e3.code).toBe('gguf-invalid');
  });

  it('parts in the wrong order, too few, or a lone part file are gguf-invalid with what to do', async () => {
    const parts = await splitGguf(FIXTURE, 3);
    const names = splitNames('order', 3);
    const files = parts.map((b, i) => new File([b], names[i]));
    const e = await rejection(openModelSource([files[0], files[2], files[1]]));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toMatch(/in order/);
    expect((await rejection(openModelSource(files.slice(0, 2)))).message).toMatch(/a part is missing/);
    expect((await rejection(openModelSource(files[0]))).message).toMatch(/pass all 3 files/);
    expect((await rejection(openModelSource([new File([FIXTURE], 'a.gguf'), files[1]]))).message).toMatch(
      /not the first part/,
    );
  });

  it('a read across part boundaries is stitched from both parts (gaps read as zeros)', async () => {
    const parts = await splitGguf(FIXTURE, 2);
    const source = await openModelSource(parts.map((b) => new Blob([b])));
    const all = await source.read(0, source.size);
    for (const size of [65536, 100003]) {
      for (let at = 0; at + size <= source.size; at += size)
        expectBytes(await source.read(at, size), all.subarray(at, at + size));
    }
    const merged = await parseGguf(source);
    const boundary = (source as SplitByteSource).partInfo[0].size - 100; // the merged file's data starts after a header
    expectBytes(
      await source.read(boundary + merged.tensorDataOffset, 300),
      all.subarray(boundary + merged.tensorDataOffset, boundary + merged.tensorDataOffset + 300),
    );
    expect((await rejection(source.read(source.size - 1, 2))).code).toBe('gguf-invalid');
  });

  it('webgguf inspect shows the merged view of a split model and lists its parts', async () => {
    const [first] = writeParts('inspect', await splitGguf(FIXTURE, 2));
    const whole = await parseGguf(new MemoryByteSource(FIXTURE));
    const r = await runCliCaptured('inspect', first, '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as {
      parts: { tensors: number }[];
      tensors: unknown[];
      metadata: Record<string, unknown>;
    };
    expect(report.parts).toHaveLength(2);
    expect(report.tensors).toHaveLength(whole.tensors.length);
    expect(report.parts[0].tensors + report.parts[1].tensors).toBe(whole.tensors.length);
    expect(Object.keys(report.metadata).some((k) => k.startsWith('split.'))).toBe(false);
    const text = await runCliCaptured('inspect', first);
    expect(text.out).toMatch(/merged view of 2 split parts/);
    expect(text.out).toMatch(/part 2 .*inspect-00002-of-00002\.gguf/);
  });
});
