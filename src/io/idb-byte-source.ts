/**
 * `IdbByteSource`: a `ByteSource` over a COMPLETE entry of the IndexedDB model store — no network at all. It refuses
 * incomplete entries, and a chunk found missing or damaged while reading marks the entry incomplete (so the next
 * `downloadModel` refetches just that chunk) instead of ever serving wrong bytes.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { type ByteSource, checkReadRange } from './byte-source.js';
import {
  type ModelManifest,
  type ModelStoreOptions,
  asStoreError,
  chunkLength,
  readChunk,
  readManifest,
  updateManifest,
} from './model-store.js';

/** How many decoded chunks a source keeps in memory (a tensor read often spans a chunk boundary). */
const CACHED_CHUNKS = 2;

/** Random access to a model file cached in IndexedDB. */
export class IdbByteSource implements ByteSource {
  /** Most recently used chunks, newest last: `[index, (chunkLength) bytes]`. */
  private readonly recent: [number, Uint8Array][] = [];
  private isClosed = false;

  private constructor(
    private readonly manifest: ModelManifest,
    private readonly options: ModelStoreOptions,
  ) {}

  /**
   * Opens the stored entry of `url`. Rejects with `LlmError('invalid-request')` when the store has no complete entry
   * for it (call `downloadModel` first). Updates the entry's `lastUsedAt`.
   */
  static async open(url: string | URL, options: ModelStoreOptions & { signal?: AbortSignal } = {}): Promise<IdbByteSource> {
    const href = String(url);
    throwIfAborted(options.signal, `opening cached ${href}`);
    const m = await readManifest(href, options).catch((e: unknown) => {
      throw asStoreError(e, `opening cached ${href}`);
    });
    if (m === undefined || !m.complete) {
      throw new LlmError('invalid-request', `${href} is not ${m === undefined ? '' : 'completely '}in the model store; ` +
        'download it first with downloadModel (or open it with caching off)', {
        details: { url: href, isPresent: m !== undefined },
      });
    }
    const touched = await updateManifest(href, m.downloadId, (cur) => ({ ...cur, lastUsedAt: Date.now() }), options);
    return new IdbByteSource(touched ?? m, { store: options.store });
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
    if (this.isClosed) throw new LlmError('invalid-request', `read of ${this.name} after close(); open the model again`);
    checkReadRange(this.name, this.size, offset, length);
    const { chunkBytes } = this.manifest;
    const first = Math.floor(offset / chunkBytes);
    const last = length === 0 ? first - 1 : Math.floor((offset + length - 1) / chunkBytes);
    if (first === last) {
      const chunk = await this.chunk(first);
      const at = offset - first * chunkBytes;
      return chunk.slice(at, at + length);
    }
    const out = new Uint8Array(length); // (length) bytes of [offset, offset + length)
    for (let i = first; i <= last; i++) {
      throwIfAborted(signal, `read of ${this.name}`);
      const chunk = await this.chunk(i);
      const chunkStart = i * chunkBytes;
      const from = Math.max(offset, chunkStart);
      const to = Math.min(offset + length, chunkStart + chunk.byteLength);
      out.set(chunk.subarray(from - chunkStart, to - chunkStart), from - offset);
    }
    return out;
  }

  /** Drops the cached chunks; later reads reject. */
  async close(): Promise<void> {
    this.isClosed = true;
    this.recent.length = 0;
  }

  /** Chunk `index`, from the small in-memory cache or IndexedDB; a missing/damaged chunk invalidates the entry. */
  private async chunk(index: number): Promise<Uint8Array> {
    const hit = this.recent.findIndex(([i]) => i === index);
    if (hit >= 0) {
      const [entry] = this.recent.splice(hit, 1);
      this.recent.push(entry);
      return entry[1];
    }
    const bytes = await readChunk(this.name, index, this.options).catch((e: unknown) => {
      throw asStoreError(e, `reading chunk ${index} of cached ${this.name}`);
    });
    const expected = chunkLength(this.manifest, index);
    if (bytes === undefined || bytes.byteLength !== expected) {
      await updateManifest(this.name, this.manifest.downloadId, (m) => {
        const chunkPresent = m.chunkPresent.slice();
        chunkPresent[index] = false;
        return { ...m, chunkPresent, complete: false };
      }, this.options).catch(() => null);
      throw new LlmError('network', `reading cached ${this.name}: chunk ${index} is ${bytes === undefined ? 'missing' : `${bytes.byteLength} bytes, not ${expected}`}; ` +
        'the entry was marked incomplete: call downloadModel again to refetch the damaged part', {
        details: { url: this.name, chunk: index },
      });
    }
    this.recent.push([index, bytes]);
    if (this.recent.length > CACHED_CHUNKS) this.recent.shift();
    return bytes;
  }
}
