/**
 * Checking a stored model against the digests recorded for it: every chunk is read back from IndexedDB and its
 * sha256 compared with the one recorded when it was written; optionally the whole file is hashed in order too (when
 * a download completes, to record the file's sha256). Shared by `downloadModel` (at the end of a download) and
 * `IdbByteSource.open` (on every later open), so a stored copy whose bytes changed is never served.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { type ProgressCallback, reportProgress } from './download-progress.js';
import { type ModelManifest, type ModelStoreOptions, asStoreError, chunkLength, readChunk } from './model-store.js';
import { Sha256, sha256HexAsync } from './sha256.js';

/** What `checkStoredChunks` found. */
export type StoredCheck =
  | {
      readonly ok: true /** The whole file's sha256 when `wholeFile` was asked for, else null. */;
      readonly sha256: string | null;
    }
  | { readonly ok: false; readonly chunk: number; readonly reason: string };

/** Options of `checkStoredChunks`. */
export interface StoredCheckOptions extends ModelStoreOptions {
  signal?: AbortSignal;
  onProgress?: ProgressCallback;
  /** Also hash the whole file in order (slower: a portable incremental SHA-256, ~150 MB/s). */
  wholeFile?: boolean;
}

/** Reads every chunk of `m` and checks its length and recorded sha256 (reporting `verify` progress). */
export async function checkStoredChunks(m: ModelManifest, options: StoredCheckOptions): Promise<StoredCheck> {
  const whole = options.wholeFile === true ? new Sha256() : null;
  let checkedBytes = 0;
  for (let i = 0; i < m.chunkPresent.length; i++) {
    throwIfAborted(options.signal, `verification of ${m.url}`);
    const chunk = await readChunk(m.url, i, options).catch((e: unknown) => {
      throw asStoreError(e, `verifying chunk ${i} of cached ${m.url}`);
    });
    const expectedLength = chunkLength(m, i);
    if (chunk === undefined) return { ok: false, chunk: i, reason: `chunk ${i} is missing` };
    if (chunk.byteLength !== expectedLength)
      return { ok: false, chunk: i, reason: `chunk ${i} is ${chunk.byteLength} bytes, not ${expectedLength}` };
    const recorded = m.chunkSha256?.[i] ?? null;
    if (recorded === null) return { ok: false, chunk: i, reason: `chunk ${i} has no recorded sha256` };
    const actual = await sha256HexAsync(chunk);
    if (actual !== recorded)
      return {
        ok: false,
        chunk: i,
        reason: `chunk ${i} has sha256 ${actual}, not the ${recorded} recorded when it was stored`,
      };
    whole?.update(chunk);
    checkedBytes += chunk.byteLength;
    reportProgress(options.onProgress, { phase: 'verify', loadedBytes: checkedBytes, totalBytes: m.size, url: m.url });
  }
  return { ok: true, sha256: whole?.digestHex() ?? null };
}

/** The error for a stored copy that failed its check: it is not served (and was dropped or marked for refetch). */
export function storedCopyDamagedError(url: string, reason: string, chunk: number): LlmError {
  return new LlmError(
    'network',
    `opening cached ${url}: the stored copy does not match the checksums recorded when ` +
      `it was downloaded (${reason}); it is not served and the damaged part will be downloaded again: call downloadModel ` +
      '(or open the model again)',
    { details: { url, chunk, reason: 'checksum-mismatch' } },
  );
}

/** True for the error from `storedCopyDamagedError`. */
export function isStoredCopyDamagedError(e: unknown): e is LlmError {
  return e instanceof LlmError && e.details?.reason === 'checksum-mismatch';
}
