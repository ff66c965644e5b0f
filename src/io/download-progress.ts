/**
 * Progress events reported while model bytes are fetched, stored and verified. One shape for the HTTP reader and
 * the IndexedDB store, so a UI draws a single progress bar whatever the source.
 */

/**
 * What the reporter is doing:
 * - `download`: bytes are arriving from the network (`loadedBytes` counts bytes held, including chunks already cached);
 * - `verify`: the finished file's sha256 is being checked (`loadedBytes` counts bytes hashed);
 * - `restart`: the file changed on the server; what was fetched so far was discarded and the download starts over;
 * - `cached`: the file was already complete in the store; nothing was fetched.
 */
export type DownloadPhase = 'download' | 'verify' | 'restart' | 'cached';

/** One progress report. `loadedBytes` ≤ `totalBytes`; both are byte counts of the model file. */
export interface DownloadProgress {
  readonly phase: DownloadPhase;
  readonly loadedBytes: number;
  readonly totalBytes: number;
  /** The URL (or name) of the file. */
  readonly url: string;
}

/** Callback receiving progress reports; it must not throw (exceptions are swallowed so a UI bug never kills a download). */
export type ProgressCallback = (progress: DownloadProgress) => void;

/** Calls `cb` with `progress`, swallowing anything it throws. */
export function reportProgress(cb: ProgressCallback | undefined, progress: DownloadProgress): void {
  if (cb === undefined) return;
  try {
    cb(progress);
  } catch {
    // A broken progress callback is the caller's bug; it must not corrupt the transfer.
  }
}
