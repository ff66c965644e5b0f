/**
 * Chunk memory of `IdbByteSource` during a load (issue 20): a chunk the in-order weight stream (`readInto` of a source
 * opened with `readAhead`, as `createEngine` opens it) has copied out through its last byte is released at once —
 * its buffer transferred into a message on a channel closed at once, which in Chromium frees the memory of a
 * browser-made buffer (`transfer(0)` left every chunk of a load resident) — while the header parse's `read`s, which
 * read past the header, and a source read out of order keep their chunks; every byte still reads right after.
 */

import 'fake-indexeddb/auto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IdbByteSource } from '../../../src/io/idb-byte-source.js';
import { downloadModel } from '../../../src/io/model-download.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { sharedPath } from '../../helpers/shared-path.js';

const PATH = '/models/stories260K-chunk-release.gguf';
const FIXTURE = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
const CHUNK = 64 * 1024;
const N_CHUNKS = Math.ceil(FIXTURE.byteLength / CHUNK);

/** Buffers handed to `MessagePort.postMessage` as transfers while the spy is on. */
const released: ArrayBuffer[] = [];
const originalPost = MessagePort.prototype.postMessage;

let server: FaultServer;
let url: string;
beforeAll(async () => {
  server = await startFaultServer();
  server.replaceFile(PATH, FIXTURE);
  url = server.url(PATH);
  await downloadModel(url, { chunkBytes: CHUNK, retryDelayMs: 1 });
  MessagePort.prototype.postMessage = function (this: MessagePort, message: unknown, transfer?: unknown) {
    const list = Array.isArray(transfer) ? transfer : [];
    for (const t of list) if (t instanceof ArrayBuffer && t.byteLength > 0) released.push(t);
    return (originalPost as (m: unknown, t?: unknown) => void).call(this, message, transfer);
  } as typeof MessagePort.prototype.postMessage;
});
afterAll(async () => {
  MessagePort.prototype.postMessage = originalPost;
  await server.close();
});
afterEach(() => {
  released.length = 0;
});

/** Reads the whole file in `piece`-byte `readInto`s, in order. */
async function stream(src: IdbByteSource, piece: number): Promise<Uint8Array> {
  const all = new Uint8Array(FIXTURE.byteLength);
  for (let at = 0; at < all.byteLength; at += piece) await src.readInto(at, all.subarray(at, at + piece));
  return all;
}

describe('IdbByteSource chunk release', () => {
  it('an in-order stream releases each chunk once copied out through its end, the last one included', async () => {
    const src = await IdbByteSource.open(url, { verify: 'read', readAhead: 2 });
    // The header parse reads past the header: those chunks stay for the tensor reads that follow.
    expect(await src.read(0, CHUNK + 100)).toEqual(FIXTURE.subarray(0, CHUNK + 100));
    expect(released).toHaveLength(0);
    // Pieces that do not divide the chunk: each chunk is released by the read that passes its last byte.
    expect(await stream(src, 24 * 1024 + 4)).toEqual(FIXTURE);
    expect(released).toHaveLength(N_CHUNKS);
    expect(released.every((b) => b.byteLength === 0)).toBe(true); // detached: nothing left to view them
    // A chunk read again after its release is fetched again, with the same bytes.
    const again = new Uint8Array(100);
    await src.readInto(CHUNK - 50, again);
    expect(again).toEqual(FIXTURE.subarray(CHUNK - 50, CHUNK + 50));
    await src.close();
  });

  it('reads that share a chunk one of them releases still get its bytes (it is fetched again)', async () => {
    const src = await IdbByteSource.open(url, { verify: 'read', readAhead: 2 });
    const head = new Uint8Array(100);
    await src.readInto(0, head); // chunk 0 cached
    const tail = new Uint8Array(100); // ends at chunk 0's end: releases it
    const inner = new Uint8Array(100); // inside chunk 0, resumed after the release
    await Promise.all([src.readInto(CHUNK - 100, tail), src.readInto(CHUNK - 300, inner), src.read(CHUNK - 250, 50)]);
    expect(tail).toEqual(FIXTURE.subarray(CHUNK - 100, CHUNK));
    expect(inner).toEqual(FIXTURE.subarray(CHUNK - 300, CHUNK - 200));
    expect(await src.read(CHUNK - 250, 50)).toEqual(FIXTURE.subarray(CHUNK - 250, CHUNK - 200));
    await src.close();
  });

  it('a source not opened for an in-order read keeps its recent chunks until they age out', async () => {
    const src = await IdbByteSource.open(url, { verify: 'read' });
    expect(await stream(src, CHUNK)).toEqual(FIXTURE);
    expect(released).toHaveLength(N_CHUNKS - 2); // two kept
    await src.close();
    expect(released).toHaveLength(N_CHUNKS); // and released at close
  });
});
