/**
 * Reading HTTP response bodies for the range reader: a ranged body streamed into its slot of the caller's buffer
 * (so bytes received before a drop are kept and the retry resumes after them), and the whole body of a server that
 * ignores `Range`, accepted only up to a size cap. Every stream read also rejects promptly when the attempt aborts.
 */

import { LlmError } from '../errors.js';
import { type ProgressCallback, reportProgress } from './download-progress.js';
import { RetryableFailure } from './http-response-checks.js';
import type { Attempt } from './retry-loop.js';

/** Streams `res`'s body into `into`, calling `onBytes` per piece; more bytes than `into` holds is a server error. */
export async function streamBody(
  res: Response,
  into: Uint8Array,
  attempt: Attempt,
  onBytes: (n: number) => void,
  step: string,
): Promise<void> {
  if (res.body === null) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.byteLength > into.byteLength) throw overlongBody(res.url, step, into.byteLength);
    into.set(bytes);
    attempt.progressed();
    onBytes(bytes.byteLength);
    return;
  }
  const reader = res.body.getReader();
  let pos = 0;
  try {
    for (;;) {
      if (pos === into.byteLength) {
        // Everything expected has arrived: don't wait for end-of-stream (a late abort can leave that read pending).
        void reader.cancel().catch(() => undefined);
        return;
      }
      const { done, value } = await readOrAbort(reader, attempt.signal);
      if (done) return;
      if (pos + value.byteLength > into.byteLength) throw overlongBody(res.url, step, into.byteLength);
      into.set(value, pos);
      pos += value.byteLength;
      attempt.progressed();
      onBytes(value.byteLength);
    }
  } catch (e) {
    void reader.cancel().catch(() => undefined);
    if (e instanceof LlmError) throw e;
    throw new RetryableFailure(`connection dropped after ${pos} bytes (${String(e)})`, null, { cause: e });
  }
}

/**
 * `reader.read()`, rejecting as soon as `signal` aborts. Fetch implementations differ in whether an abort reliably
 * settles a pending body read (undici can leave it pending once the body has fully arrived), so do not rely on it.
 */
export function readOrAbort<T>(
  reader: ReadableStreamDefaultReader<T>,
  signal: AbortSignal,
): Promise<ReadableStreamReadResult<T>> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    reader
      .read()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function overlongBody(url: string, step: string, expected: number): LlmError {
  return new LlmError(
    'network',
    `${step}: the server sent more than the ${expected} bytes requested; its Range support is broken`,
    {
      details: { url, expected },
    },
  );
}

/** Streams a 200 (Range ignored) body into memory when it fits `maxFullBodyBytes`, else `range-unsupported`. */
export async function readFullBody(
  url: string,
  res: Response,
  maxFullBodyBytes: number,
  onProgress: ProgressCallback | undefined,
  attempt: Attempt,
): Promise<Uint8Array> {
  const declared = res.headers.get('content-length');
  const cap = maxFullBodyBytes;
  const tooBig = (size: string): LlmError =>
    new LlmError(
      'range-unsupported',
      `opening ${url}: the server ignores HTTP Range requests and the file (${size}) ` +
        `is larger than the ${cap}-byte limit for reading it whole; serve it from a server with Range support ` +
        'or raise maxFullBodyBytes',
      { details: { url, maxFullBodyBytes: cap } },
    );
  const size = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
  if (size !== null && size > cap) {
    await res.body?.cancel().catch(() => undefined);
    throw tooBig(`${size} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body?.getReader();
  if (reader === undefined) return new Uint8Array(await res.arrayBuffer());
  try {
    for (;;) {
      const { done, value } = await readOrAbort(reader, attempt.signal);
      if (done) break;
      total += value.byteLength;
      if (total > cap) throw tooBig(`over ${cap} bytes`);
      chunks.push(value);
      attempt.progressed();
      reportProgress(onProgress, { phase: 'download', loadedBytes: total, totalBytes: size ?? total, url });
    }
  } catch (e) {
    void reader.cancel().catch(() => undefined);
    if (e instanceof LlmError) throw e;
    throw new RetryableFailure(`connection dropped after ${total} bytes of the full body (${String(e)})`, null, {
      cause: e,
    });
  }
  if (size !== null && total !== size) throw new RetryableFailure(`short body: ${total} of ${size} bytes arrived`);
  const body = new Uint8Array(total); // (size) bytes: the whole file
  let pos = 0;
  for (const c of chunks) {
    body.set(c, pos);
    pos += c.byteLength;
  }
  return body;
}
