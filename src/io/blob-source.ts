/**
 * `BlobByteSource`: a `ByteSource` over a `File` or `Blob` (a model the user picked or dropped on the page). Each read
 * slices the blob and reads only that slice, so a multi-GiB file is never loaded whole.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { type ByteSource, checkReadRange } from './byte-source.js';
import { releaseBuffer } from './release-buffer.js';

/** Random access to a `Blob`/`File`. */
export class BlobByteSource implements ByteSource {
  readonly size: number;
  readonly name: string;
  private blob: Blob | null;

  /** `name` defaults to the file name (for a `File`) or `'blob'`. */
  constructor(blob: Blob, name?: string) {
    this.blob = blob;
    this.size = blob.size;
    this.name =
      name ?? (typeof (blob as File).name === 'string' && (blob as File).name !== '' ? (blob as File).name : 'blob');
  }

  /** Reads `[offset, offset + length)` through `blob.slice(…).arrayBuffer()`. */
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal, `read of ${this.name}`);
    const blob = this.blob;
    if (blob === null) throw new LlmError('invalid-request', `read of ${this.name} after close(); open the file again`);
    checkReadRange(this.name, this.size, offset, length);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    } catch (e) {
      // NotReadableError: the file was changed or removed on disk after it was picked.
      throw new LlmError(
        'network',
        `reading ${length} bytes at offset ${offset} of ${this.name} failed ` +
          `(${String(e)}); the file may have changed on disk: pick it again`,
        { cause: e, details: { offset, length } },
      );
    }
    throwIfAborted(signal, `read of ${this.name}`);
    if (bytes.byteLength !== length) {
      throw new LlmError(
        'network',
        `reading ${this.name}: got ${bytes.byteLength} of ${length} bytes at offset ${offset}; ` +
          'the file may have changed on disk: pick it again',
        { details: { offset, length } },
      );
    }
    return bytes;
  }

  /**
   * Reads `[offset, offset + dst.byteLength)` into `dst` (a model's weight stream: straight into backend memory),
   * with the errors of `read`. The slice read for it is released at once (`releaseBuffer`): in Chromium a load's
   * pieces would otherwise stay resident until a full garbage collection.
   */
  async readInto(offset: number, dst: Uint8Array, signal?: AbortSignal): Promise<void> {
    const bytes = await this.read(offset, dst.byteLength, signal);
    dst.set(bytes);
    releaseBuffer(bytes);
  }

  /** Drops the reference to the blob; later reads reject. */
  async close(): Promise<void> {
    this.blob = null;
  }
}
