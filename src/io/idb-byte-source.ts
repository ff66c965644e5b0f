/**
 * `IdbByteSource`: a `ByteSource` over a COMPLETE entry of the IndexedDB model store — no network at all. It refuses
 * incomplete entries and entries without recorded checksums, checks every chunk against the sha256 recorded when it
 * was stored (all at open by default), or each as it is first read — in the chunk worker against the fast checksum
 * recorded with it (chunk-sum.ts), on the calling thread and for entries stored before those were recorded against
 * the sha256 — and a chunk found missing or damaged marks the
 * entry incomplete (so the next `downloadModel` refetches it) instead of ever serving wrong bytes.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { type ByteSource, checkReadRange } from './byte-source.js';
import type { ProgressCallback } from './download-progress.js';
import {
  type ModelManifest,
  type ModelStoreOptions,
  asStoreError,
  chunkLength,
  deleteModel,
  isServable,
  markChunkMissing,
  readChunk,
  readManifest,
  updateManifest,
} from './model-store.js';
import type { ChunkHash, ChunkReader } from './idb-chunk-reader.js';
import { releaseBuffer } from './release-buffer.js';
import { sha256HexAsync } from './sha256.js';
import { checkStoredChunks, storedCopyDamagedError } from './stored-model-check.js';

/** Options of `IdbByteSource.open`. */
export interface IdbByteSourceOptions extends ModelStoreOptions {
  signal?: AbortSignal;
  /** Receives `verify` progress while the stored chunks are checked at open. */
  onProgress?: ProgressCallback;
  /**
   * When the stored bytes are checked against the sha256 recorded per chunk at download:
   * - `'open'` (default): every chunk before `open` resolves — a damaged copy is refused up front, at the cost of
   *   reading and hashing the whole file once more per open (WebCrypto: roughly 0.8 GB/s of hashing plus the
   *   IndexedDB read);
   * - `'read'`: each chunk when it is first read — the same guarantee that no unchecked byte is served, with no extra
   *   pass (loading a model reads every tensor anyway), but damage surfaces at the read that meets it. Reading in
   *   order, the next chunk is fetched and hashed while the current one is consumed. `createEngine` opens this way:
   *   the load's single read is the check, and a damaged chunk fails the load before the model is served.
   */
  verify?: 'open' | 'read';
  /**
   * Chunks kept in flight ahead of an in-order read (default 2, from the second chunk read in order; at most 64). Set, the
   * read-ahead starts at the first read of chunk 0: for a caller that reads the whole file in order (a model load —
   * `createEngine` passes `LOAD_READ_AHEAD`), so IndexedDB keeps reading while the header is parsed and the tokenizer
   * built. Consumed chunks are dropped (two are kept), so a deep read-ahead holds memory only while the reader is
   * ahead of the consumer.
   */
  readAhead?: number;
}

/** A chunk's digest as read: its sha256 or its fast checksum (`chunkSum`), hex. */
interface Digest {
  readonly kind: 'sha256' | 'sum';
  readonly value: string;
}

/** The read-ahead `createEngine` asks for (in chunks: 128 MiB at the default 16 MiB chunk size). */
export const LOAD_READ_AHEAD = 8;

/** How many decoded chunks a source keeps in memory (a tensor read often spans a chunk boundary). */
const CACHED_CHUNKS = 2;
/**
 * How many chunks an in-order read keeps in flight ahead of the one being consumed by default: the reads (and
 * hashes) run in the chunk worker, so two ahead keep IndexedDB busy while this thread repacks and uploads.
 */
const READ_AHEAD = 2;

/** Random access to a model file cached in IndexedDB. */
export class IdbByteSource implements ByteSource {
  /** Most recently used chunks, newest last: `[index, (chunkLength) bytes]`. */
  private readonly recent: [number, Uint8Array][] = [];
  /** Chunks being fetched ahead of an in-order read, by index. */
  private readonly ahead = new Map<number, Promise<Uint8Array>>();
  /** Index of the last chunk fetched on demand (read-ahead starts when the next one follows it). */
  private lastMiss: number;
  private isClosed = false;
  /** Whether a chunk was read yet (the first one does not wait for the chunk reader). */
  private hasRead = false;
  /** The chunk reader once it is ready (frees dropped chunks: off this thread where it runs a worker). */
  private reader: ChunkReader | null = null;

  private constructor(
    private readonly manifest: ModelManifest,
    private readonly options: ModelStoreOptions,
    /** Check each chunk's sha256 when it is read from IndexedDB (`verify: 'read'`). */
    private readonly isCheckedPerRead: boolean,
    /**
     * The chunk reader (reads and hashes chunks in a worker where one can run), from its own module, fetched on
     * first use: only a stored copy needs it. Null where that module could not load (reads then run here).
     */
    private readonly readerReady: Promise<ChunkReader | null>,
    /** Chunks kept in flight ahead of an in-order read. */
    private readonly readAhead: number,
    /**
     * Read in order (`readAhead` given): the read-ahead starts at the first read of chunk 0, and a chunk that
     * `readInto` has copied out through its last byte is dropped at once.
     */
    private readonly isSequential: boolean,
  ) {
    this.lastMiss = isSequential ? -1 : -2;
  }

  /**
   * Opens the stored entry of `url`. Rejects with `LlmError('invalid-request')` when the store has no complete entry
   * for it (call `downloadModel` first), and with `LlmError('network')`, `details.reason: 'checksum-mismatch'`, when
   * its bytes do not match the checksums recorded at download (the damaged chunk is marked for refetch) or it has no
   * checksums (written by an older version: it is deleted). Updates the entry's `lastUsedAt`.
   */
  static async open(url: string | URL, options: IdbByteSourceOptions = {}): Promise<IdbByteSource> {
    const href = String(url);
    throwIfAborted(options.signal, `opening cached ${href}`);
    const m = await readManifest(href, options).catch((e: unknown) => {
      throw asStoreError(e, `opening cached ${href}`);
    });
    if (m === undefined || !m.complete) {
      throw new LlmError(
        'invalid-request',
        `${href} is not ${m === undefined ? '' : 'completely '}in the model store; ` +
          'download it first with downloadModel (or open it with caching off)',
        {
          details: { url: href, isPresent: m !== undefined },
        },
      );
    }
    if (!isServable(m)) {
      await deleteModel(href, options).catch(() => false);
      throw storedCopyDamagedError(href, 'it was stored without checksums by an older version, so it was deleted', -1);
    }
    const verify = options.verify ?? 'open';
    if (verify !== 'open' && verify !== 'read') {
      throw new LlmError(
        'invalid-request',
        `IdbByteSource.open option verify must be 'open' or 'read', got ${String(verify)}`,
        { details: { field: 'verify' } },
      );
    }
    if (verify === 'open') {
      const check = await checkStoredChunks(m, options);
      if (!check.ok) {
        await markChunkMissing(href, m.downloadId, check.chunk, options);
        throw storedCopyDamagedError(href, check.reason, check.chunk);
      }
    }
    const touched = await updateManifest(href, m.downloadId, (cur) => ({ ...cur, lastUsedAt: Date.now() }), options);
    const store: ModelStoreOptions = options.store === undefined ? {} : { store: options.store };
    const readAhead = Math.min(64, Math.floor(options.readAhead ?? READ_AHEAD)) || 0; // a hint: clamped, NaN → 0
    const reader = import('./idb-chunk-reader.js').then(
      (m) => m.openChunkReader(store),
      () => null,
    );
    return new IdbByteSource(
      touched ?? m,
      store,
      verify === 'read',
      reader,
      readAhead,
      options.readAhead !== undefined,
    );
  }

  /** File size in bytes. */
  get size(): number {
    return this.manifest.size;
  }

  /** The URL the file was downloaded from. */
  get name(): string {
    return this.manifest.url;
  }

  /** Expected/verified sha256 of the entry, when known. */
  get sha256(): string | null {
    return this.manifest.sha256;
  }

  /** Reads `[offset, offset + length)` from the stored chunks. */
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal, `read of ${this.name}`);
    this.checkOpen();
    checkReadRange(this.name, this.size, offset, length);
    const { chunkBytes } = this.manifest;
    const first = Math.floor(offset / chunkBytes);
    if (length > 0 && first === Math.floor((offset + length - 1) / chunkBytes)) {
      let chunk = await this.chunk(first);
      while (chunk.byteLength === 0) {
        this.checkOpen(); // released by `close`, or by a concurrent read (`drop`): fetched again
        chunk = await this.chunk(first);
      }
      const at = offset - first * chunkBytes;
      return chunk.slice(at, at + length);
    }
    const out = new Uint8Array(length); // (length) bytes of [offset, offset + length)
    await this.copyInto(offset, out, false, signal);
    return out;
  }

  /**
   * Copies `[offset, offset + dst.byteLength)` from the stored chunks straight into `dst`. Reading on in order, the
   * next chunk is fetched (and checked, with `verify: 'read'`) while this one is consumed.
   */
  async readInto(offset: number, dst: Uint8Array, signal?: AbortSignal): Promise<void> {
    return this.copyInto(offset, dst, this.isSequential, signal);
  }

  /**
   * `readInto`; `isConsuming`: the caller reads the file in order and will not come back (a model's weight stream,
   * while `read` serves the header parse, which reads past the header), so a chunk copied out through its last byte
   * is dropped at once (a later read of it fetches it again).
   */
  private async copyInto(offset: number, dst: Uint8Array, isConsuming: boolean, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, `read of ${this.name}`);
    this.checkOpen();
    const length = dst.byteLength;
    checkReadRange(this.name, this.size, offset, length);
    const { chunkBytes } = this.manifest;
    const first = Math.floor(offset / chunkBytes);
    const last = length === 0 ? first - 1 : Math.floor((offset + length - 1) / chunkBytes);
    for (let i = first; i <= last; i++) {
      throwIfAborted(signal, `read of ${this.name}`);
      let chunk = await this.chunk(i);
      while (chunk.byteLength === 0) {
        this.checkOpen(); // released by `close`, or by a concurrent read (`drop`): fetched again
        chunk = await this.chunk(i);
      }
      const chunkStart = i * chunkBytes;
      const from = Math.max(offset, chunkStart);
      const to = Math.min(offset + length, chunkStart + chunk.byteLength);
      dst.set(chunk.subarray(from - chunkStart, to - chunkStart), from - offset);
      if (isConsuming && to === chunkStart + chunk.byteLength) this.drop(i);
    }
  }

  private checkOpen(): void {
    if (this.isClosed)
      throw new LlmError('invalid-request', `read of ${this.name} after close(); open the model again`);
  }

  /** Drops the cached chunks; later reads reject. */
  async close(): Promise<void> {
    this.isClosed = true;
    for (const [, bytes] of this.recent.splice(0)) this.release(bytes);
    this.ahead.clear();
    void this.readerReady.then((r) => r?.close());
  }

  /**
   * Drops chunk `index` from the in-memory cache (a reader in order is done with it), freeing its memory now. A
   * concurrent read handed that chunk before may resume after this with its view emptied (the buffer detached): a
   * stored chunk is never empty, so the readers re-ask for an empty one, which fetches it again.
   */
  private drop(index: number): void {
    const at = this.recent.findIndex(([i]) => i === index);
    if (at >= 0) this.release(this.recent.splice(at, 1)[0][1]);
  }

  /** Frees a chunk's memory now: through the chunk reader (its worker's thread) once it is ready, else here. */
  private release(bytes: Uint8Array): void {
    if (this.reader !== null) this.reader.release(bytes);
    else releaseBuffer(bytes);
  }

  /**
   * Chunk `index`, from the small in-memory cache, a fetch already under way, or IndexedDB. After a miss that follows
   * the previous one (reading in order, as a model load does), the next `readAhead` chunks are fetched (and checked)
   * ahead; each chunk is read from IndexedDB once.
   */
  private async chunk(index: number): Promise<Uint8Array> {
    const hit = this.recent.findIndex(([i]) => i === index);
    if (hit >= 0) {
      const [entry] = this.recent.splice(hit, 1);
      this.recent.push(entry);
      return entry[1];
    }
    const pending = this.ahead.get(index) ?? this.fetchChunk(index);
    for (const i of this.ahead.keys()) if (i <= index) this.ahead.delete(i); // taken, or passed over
    const isInOrder = this.lastMiss === index - 1;
    this.lastMiss = index;
    const end = Math.min(index + this.readAhead, this.manifest.chunkPresent.length - 1);
    for (let i = index + 1; isInOrder && i <= end; i++) {
      if (this.ahead.has(i) || this.recent.some(([r]) => r === i)) continue;
      const bytes = this.fetchChunk(i);
      bytes.catch(() => undefined); // surfaces only if that chunk is read
      this.ahead.set(i, bytes);
    }
    const bytes = await pending;
    this.recent.push([index, bytes]);
    if (this.recent.length > CACHED_CHUNKS) this.release(this.recent.shift()![1]);
    return bytes;
  }

  /**
   * Chunk `index`'s bytes and (when checked per read) sha256, through the chunk reader; the very first read (the
   * header, which everything else waits on) runs here, not waiting for the reader's module and worker to start.
   */
  private async readThrough(index: number): Promise<{ bytes: Uint8Array | undefined; digest: Digest | null }> {
    const isFirst = !this.hasRead;
    this.hasRead = true;
    const hash = this.checkOf(index);
    const reader = isFirst ? null : await this.readerReady;
    if (reader !== null) {
      this.reader = reader;
      const r = await reader.read(this.name, index, hash);
      const value = (hash === 'sum' ? r.sum : r.sha256) ?? null;
      return { bytes: r.bytes, digest: value === null ? null : { kind: hash === 'sum' ? 'sum' : 'sha256', value } };
    }
    // Here (the header chunk, or no worker): WebCrypto's sha256, native from the first byte, where the JS sum would
    // run cold (a one-shot 16 MiB loop starts interpreted: ~4× slower than the native hash in a Chromium profile).
    const bytes = await readChunk(this.name, index, this.options);
    if (!hash || bytes === undefined) return { bytes, digest: null };
    return { bytes, digest: { kind: 'sha256', value: await sha256HexAsync(bytes) } };
  }

  /**
   * How chunk `index` is checked when read in the chunk worker: not at all (`verify: 'open'` checked it), by the fast
   * checksum recorded with it (chunk-sum.ts), or by its sha256 (entries stored before checksums were recorded).
   */
  private checkOf(index: number): ChunkHash {
    if (!this.isCheckedPerRead) return false;
    return typeof this.manifest.chunkSums?.[index] === 'string' ? 'sum' : true;
  }

  /** Reads chunk `index` from IndexedDB and checks it; a missing/damaged chunk invalidates the entry. */
  private async fetchChunk(index: number): Promise<Uint8Array> {
    const read = await this.readThrough(index).catch((e: unknown) => {
      throw asStoreError(e, `reading chunk ${index} of cached ${this.name}`);
    });
    const bytes = read.bytes;
    const expected = chunkLength(this.manifest, index);
    if (bytes === undefined || bytes.byteLength !== expected) {
      await markChunkMissing(this.name, this.manifest.downloadId, index, this.options);
      throw new LlmError(
        'network',
        `reading cached ${this.name}: chunk ${index} is ${bytes === undefined ? 'missing' : `${bytes.byteLength} bytes, not ${expected}`}; ` +
          'the entry was marked incomplete: call downloadModel again to refetch the damaged part',
        {
          details: { url: this.name, chunk: index },
        },
      );
    }
    if (this.isCheckedPerRead) {
      const kind = read.digest?.kind ?? 'sha256';
      const recorded = (kind === 'sum' ? this.manifest.chunkSums?.[index] : this.manifest.chunkSha256?.[index]) ?? null;
      if (read.digest?.value !== recorded) {
        await markChunkMissing(this.name, this.manifest.downloadId, index, this.options);
        throw storedCopyDamagedError(
          this.name,
          `chunk ${index} has ${kind === 'sum' ? 'checksum' : 'sha256'} ${read.digest?.value ?? null}, not the ${recorded} recorded when it was stored`,
          index,
        );
      }
    }
    return bytes;
  }
}
