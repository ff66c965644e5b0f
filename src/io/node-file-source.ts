/**
 * `NodeFileSource`: a `ByteSource` over a local file in Node, read with positional reads on one file handle — never
 * the whole file. `node:fs/promises` is imported dynamically inside `open`, so browser bundles that include this
 * module never pull in Node built-ins.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { type ByteSource, checkReadRange } from './byte-source.js';

/** The subset of `fs.promises.FileHandle` this source uses (keeps Node types out of the public surface). */
interface FileHandleLike {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number; isFile(): boolean }>;
  close(): Promise<void>;
}

/** Random access to a file on the local disk (Node only). */
export class NodeFileSource implements ByteSource {
  private handle: FileHandleLike | null;

  private constructor(
    handle: FileHandleLike,
    readonly size: number,
    readonly name: string,
  ) {
    this.handle = handle;
  }

  /**
   * Opens `path` for reading. A missing, unreadable or non-regular file is `LlmError('invalid-request')` naming the
   * path and the system error code.
   */
  static async open(path: string, signal?: AbortSignal): Promise<NodeFileSource> {
    throwIfAborted(signal, `opening ${path}`);
    const fs = await import('node:fs/promises');
    let handle: FileHandleLike;
    try {
      handle = await fs.open(path, 'r');
    } catch (e) {
      const errno = (e as { code?: string }).code ?? 'unknown error';
      throw new LlmError(
        'invalid-request',
        `opening model file ${path} failed (${errno}): check the path and its permissions`,
        {
          cause: e,
          details: { path, errno },
        },
      );
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) {
        throw new LlmError(
          'invalid-request',
          `opening model file ${path}: not a regular file; pass the path of a .gguf file`,
          {
            details: { path },
          },
        );
      }
      return new NodeFileSource(handle, stat.size, path);
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw e;
    }
  }

  /** Reads exactly `length` bytes at `offset` (looping over short reads). */
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal, `read of ${this.name}`);
    if (this.handle === null)
      throw new LlmError('invalid-request', `read of ${this.name} after close(); open the file again`);
    checkReadRange(this.name, this.size, offset, length);
    const out = new Uint8Array(length); // (length) bytes of [offset, offset + length)
    await this.readInto(offset, out, signal);
    return out;
  }

  /** Reads `dst.byteLength` bytes at `offset` straight into `dst` (positional reads, looping over short ones). */
  async readInto(offset: number, dst: Uint8Array, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, `read of ${this.name}`);
    const handle = this.handle;
    if (handle === null)
      throw new LlmError('invalid-request', `read of ${this.name} after close(); open the file again`);
    const length = dst.byteLength;
    checkReadRange(this.name, this.size, offset, length);
    let filled = 0;
    while (filled < length) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(dst, filled, length - filled, offset + filled));
      } catch (e) {
        throw new LlmError(
          'network',
          `reading ${length} bytes at offset ${offset} of ${this.name} failed: ${String(e)}`,
          {
            cause: e,
            details: { path: this.name, offset, length },
          },
        );
      }
      if (bytesRead === 0) {
        throw new LlmError(
          'network',
          `reading ${this.name}: the file ended at ${offset + filled} bytes, but it had ` +
            `${this.size} when opened; it was truncated while in use`,
          { details: { path: this.name, offset, length } },
        );
      }
      filled += bytesRead;
      throwIfAborted(signal, `read of ${this.name}`);
    }
  }

  /** Closes the file handle; later reads reject. Idempotent. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }
}
