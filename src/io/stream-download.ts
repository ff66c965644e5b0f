/**
 * Downloading a file whose server gives no validator to tie range requests to one version (no ETag, a weak one only,
 * no Last-Modified, or none exposed to a cross-origin page). Separate range requests could then return bytes of two
 * versions of the same size without any sign, so the file is streamed through ONE response and cut into store chunks
 * in order. When that response breaks, the transfer resumes (`Range: bytes=N-`) only if the finished file will be
 * checked against a known sha256; otherwise it restarts from zero, every failed attempt counting against `retries`.
 */

import { LlmError } from '../errors.js';
import { type ModelManifest, chunkLength } from './model-store.js';
import type { RangeReader } from './range-reader.js';
import { withRetries } from './retry-loop.js';

/** What `streamIntoStore` needs from the download. */
export interface StreamIntoStoreOptions {
  /** True when a broken transfer may continue after the last stored chunk (the result is verified by sha256). */
  readonly canResume: boolean;
  readonly signal?: AbortSignal;
  /** Stores chunk `index` of generation `m` (with its digest); rejects when the entry was replaced or on quota. */
  store(m: ModelManifest, index: number, bytes: Uint8Array): Promise<void>;
  /** Discards everything stored and returns a fresh, empty entry (a new download generation). */
  restart(): Promise<ModelManifest>;
}

/**
 * Streams the chunks `m` lacks, from the first missing one to the end of the file, through one response per attempt,
 * storing each chunk as it fills. Resolves with the entry generation that now holds every chunk.
 */
export async function streamIntoStore(
  reader: RangeReader,
  m: ModelManifest,
  options: StreamIntoStoreOptions,
): Promise<ModelManifest> {
  let manifest = m;
  const firstMissing = manifest.chunkPresent.indexOf(false);
  if (firstMissing < 0) return manifest;
  let index = firstMissing; // the chunk being filled
  let buffer = new Uint8Array(chunkLength(manifest, index)); // (chunkLength) bytes of chunk `index`
  let fill = 0; // bytes of `buffer` received (kept across attempts when resuming)
  let attempts = 0;
  const step = `downloading ${reader.url} in one response (the server sends no validator for range requests)`;
  await withRetries(
    reader.url,
    step,
    { ...reader.retryPolicy, resetOnProgress: options.canResume },
    options.signal,
    async (attempt) => {
      if (attempts++ > 0 && !options.canResume) {
        manifest = await options.restart();
        index = 0;
        buffer = new Uint8Array(chunkLength(manifest, 0));
        fill = 0;
      }
      const generation = manifest;
      await reader.streamFrom(index * generation.chunkBytes + fill, attempt, async (piece) => {
        let at = 0;
        while (at < piece.byteLength) {
          const take = Math.min(buffer.byteLength - fill, piece.byteLength - at);
          buffer.set(piece.subarray(at, at + take), fill);
          fill += take;
          at += take;
          if (fill === buffer.byteLength) {
            await options.store(generation, index, buffer);
            index++;
            fill = 0;
            if (index < generation.chunkPresent.length) buffer = new Uint8Array(chunkLength(generation, index));
            else if (at < piece.byteLength)
              throw new LlmError('network', `${step}: the server sent bytes past the end of the file`);
          }
        }
      });
    },
  );
  return manifest;
}
