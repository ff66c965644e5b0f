/**
 * `HttpByteSource`: a `ByteSource` over an HTTP(S) URL, reading only the byte ranges asked for through
 * `RangeReader` (bounded parallel requests, retries that resume, `If-Range` version checks). For a server that
 * ignores `Range`, the whole (small enough) file is held in memory instead.
 */

import { LlmError } from '../errors.js';
import type { ByteSource } from './byte-source.js';
import { RangeReader, type RangeReaderOptions } from './range-reader.js';

/** Options of `HttpByteSource.open`: those of the range reader. */
export type HttpByteSourceOptions = RangeReaderOptions;

/**
 * Random access to a remote model file.
 *
 * Versioning: the file's ETag/Last-Modified are learned at `open` and sent as `If-Range` with every read. If the file
 * changes on the server, reads reject with the file-changed `LlmError('network')` (`isFileChangedError`): bytes a
 * caller already holds came from the old version, so the source cannot silently switch; reopen it to read the new
 * version. (The IndexedDB store, which hands nothing out before the download completes, restarts on its own.)
 */
export class HttpByteSource implements ByteSource {
  private isClosed = false;

  private constructor(private readonly reader: RangeReader) {}

  /** Probes `url` (size, validators, Range support) and returns a source over it. */
  static async open(url: string | URL, options: HttpByteSourceOptions = {}): Promise<HttpByteSource> {
    return new HttpByteSource(await RangeReader.open(url, options));
  }

  /** Total size in bytes (from the probe's `Content-Range` total or the full body). */
  get size(): number {
    return this.reader.size;
  }

  /** The URL. */
  get name(): string {
    return this.reader.url;
  }

  /** ETag of the version being read (null when the server sent none). */
  get etag(): string | null {
    return this.reader.etag;
  }

  /** Last-Modified of the version being read (null when the server sent none). */
  get lastModified(): string | null {
    return this.reader.lastModified;
  }

  /** False when the server ignored `Range` and the file is held in memory. */
  get isRangeSupported(): boolean {
    return this.reader.isRangeSupported;
  }

  /** Reads `[offset, offset + length)`; see `RangeReader.read` for the errors. */
  read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (this.isClosed) {
      return Promise.reject(
        new LlmError('invalid-request', `read of ${this.name} after close(); open the model again`),
      );
    }
    return this.reader.read(offset, length, signal);
  }

  /** Marks the source closed; later reads reject. (Connections are per request, so nothing else is held.) */
  async close(): Promise<void> {
    this.isClosed = true;
  }
}
