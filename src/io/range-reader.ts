/**
 * `RangeReader`: resumable HTTP `Range` reads of one remote file. It probes the file once (size and validators),
 * then fetches byte ranges with a bounded number of requests in flight, checks every `206` and its `Content-Range`,
 * retries dropped connections, short bodies, stalls and 5xx with exponential backoff, resuming from the last byte
 * received, and sends `If-Range` so a file that changes on the server is detected instead of mixed. A server that
 * ignores `Range` (answers 200) is streamed once into memory when the file is small enough.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import { linkSignals, rethrowIfAborted } from './abort-signals.js';
import { checkReadRange } from './byte-source.js';
import { type ProgressCallback, reportProgress } from './download-progress.js';
import {
  type FileVersion,
  RetryableFailure,
  fileChangedError,
  httpStatusError,
  ifRangeValue,
  isRetryableStatus,
  parseContentRange,
  retryableStatusFailure,
  versionMismatch,
} from './http-response-checks.js';
import { readFullBody, readOrAbort, streamBody } from './response-body.js';
import { type Attempt, type RetryPolicy, withRetries } from './retry-loop.js';
import { SlotLimiter } from './slot-limiter.js';

/** Options of `RangeReader.open`. Every field is optional; defaults suit multi-GiB model files. */
export interface RangeReaderOptions {
  /** Cancels the probe (and, for a full-body server, the streaming of the body). */
  signal?: AbortSignal;
  /** The fetch implementation (tests, proxies, auth wrappers). Default: `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Extra request headers (e.g. `Authorization`). `Range` and `If-Range` are set by the reader. */
  headers?: Record<string, string>;
  /** Receives `download` progress: bytes received from the network so far (capped at the file size). */
  onProgress?: ProgressCallback;
  /** Most requests in flight at once (default 4). */
  maxInFlight?: number;
  /** Largest byte range of one request; longer reads are split (default 8 MiB). */
  chunkBytes?: number;
  /**
   * Consecutive failed attempts without new bytes before giving up (default 5). A download that must restart from
   * zero after a failure (a server without validators and no sha256 to verify a resumed file) counts every attempt.
   */
  retries?: number;
  /** First backoff delay; doubles after every failure without progress (default 500 ms, capped at 10 s). */
  retryDelayMs?: number;
  /** An attempt that receives no byte for this long is cancelled and retried (default 30 s). */
  stallTimeoutMs?: number;
  /** Largest file kept whole in memory when the server ignores `Range` (default 256 MiB). */
  maxFullBodyBytes?: number;
  /**
   * Longest `Retry-After` of a 429/503 (or other retryable status) that is waited out, in ms (default 60 000). A
   * shorter one replaces the backoff delay (the wait stays abortable); a longer one fails at once with
   * `LlmError('network')` and `details.retryAfterMs`, rather than contacting the server before it allows.
   */
  maxRetryAfterMs?: number;
}

const DEFAULTS = {
  maxInFlight: 4,
  chunkBytes: 8 * 1024 * 1024,
  retries: 5,
  retryDelayMs: 500,
  maxRetryDelayMs: 10_000,
  stallTimeoutMs: 30_000,
  maxFullBodyBytes: 256 * 1024 * 1024,
  maxRetryAfterMs: 60_000,
};

type Settings = typeof DEFAULTS & Pick<RangeReaderOptions, 'headers' | 'onProgress'> & { fetch: typeof fetch };

/** Random access to one remote file through HTTP range requests (or its whole body, for servers without `Range`). */
export class RangeReader implements FileVersion {
  /** Bytes received from the network over the reader's life (for progress). */
  private receivedBytes = 0;
  /** Set after a request with `If-Range` failed at the fetch level (a CORS preflight refusing the header). */
  private isIfRangeBlocked = false;
  private readonly limiter: SlotLimiter;

  private constructor(
    /** The URL as given (requests always go to it; redirects are followed per request). */
    readonly url: string,
    readonly size: number,
    readonly etag: string | null,
    readonly lastModified: string | null,
    /** The sha256 from the probe's `X-Linked-Etag`, when it held one. */
    private readonly linkedEtag: string | null,
    /** The whole file when the server ignored `Range`; null in ranged mode. `(size)` bytes. */
    private readonly fullBody: Uint8Array | null,
    private readonly settings: Settings,
  ) {
    this.limiter = new SlotLimiter(settings.maxInFlight);
  }

  /** True when the server honours `Range` (false: the whole file was streamed into memory at open). */
  get isRangeSupported(): boolean {
    return this.fullBody === null;
  }

  /**
   * True when the probe exposed a strong ETag: the one validator that identifies a version exactly (RFC 9110
   * §8.8.1), so bytes stored in an earlier session can be trusted to belong to the version served now.
   */
  get hasStrongValidator(): boolean {
    return this.etag !== null && !this.etag.startsWith('W/');
  }

  /**
   * True when separate range requests can be tied to one version with `If-Range` (a strong ETag, or Last-Modified).
   * Without one, only a single response is known to hold one version: see `streamFrom`.
   */
  get canCombineRanges(): boolean {
    return this.fullBody !== null || ifRangeValue(this) !== null;
  }

  /**
   * The sha256 the server states for the file, from `X-Linked-Etag` (Hugging Face sends the LFS object's sha256
   * there; a page sees it only if the server exposes it), else null.
   */
  get linkedSha256(): string | null {
    return this.linkedEtag;
  }

  /** The reader's retry settings (for callers running their own retried transfers through `streamFrom`). */
  get retryPolicy(): RetryPolicy {
    return this.settings;
  }

  /**
   * Streams bytes `[from, size)` through ONE response (`Range: bytes=from-`), handing them to `sink` in order
   * (awaiting it: backpressure). One response is one version of the file, which is what a server without validators
   * allows to trust. Runs one attempt (no retries: the caller decides whether a retry may resume or must restart);
   * failures worth retrying are `RetryableFailure`s, a changed file is the file-changed error.
   */
  async streamFrom(from: number, attempt: Attempt, sink: (piece: Uint8Array) => Promise<void>): Promise<void> {
    const step = `streaming bytes ${from}- of ${this.url}`;
    if (from >= this.size) return;
    const rangeHeader = `bytes=${from}-`;
    const res = await doFetch(this.settings, this.url, { Range: rangeHeader }, attempt.signal);
    const contentRange = res.headers.get('content-range');
    if (res.status === 206) {
      const range = parseContentRange(contentRange);
      if (range === null) {
        await res.body?.cancel().catch(() => undefined);
        throw new LlmError(
          'range-unsupported',
          `${step}: the 206 has ${contentRange === null ? 'no Content-Range' : `a malformed Content-Range '${contentRange}'`}; nothing was stored`,
          {
            details: { url: this.url, range: rangeHeader, contentRange },
          },
        );
      }
      const changed = versionMismatch(this, res, range.total);
      if (changed !== null) {
        await res.body?.cancel().catch(() => undefined);
        throw fileChangedError({ url: this.url, what: changed });
      }
      if (range.start !== from || range.end !== this.size - 1 || range.total !== this.size) {
        await res.body?.cancel().catch(() => undefined);
        throw new LlmError(
          'network',
          `${step}: asked for ${rangeHeader} of a ${this.size}-byte file but the server sent ` +
            `Content-Range '${contentRange}'; nothing was stored`,
          { details: { url: this.url, range: rangeHeader, contentRange } },
        );
      }
    } else if (res.status === 200 && from === 0) {
      const length = res.headers.get('content-length');
      const changed = versionMismatch(this, res, length !== null && /^\d+$/.test(length) ? Number(length) : null);
      if (changed !== null) {
        await res.body?.cancel().catch(() => undefined);
        throw fileChangedError({ url: this.url, what: changed });
      }
    } else {
      await res.body?.cancel().catch(() => undefined);
      if (isRetryableStatus(res.status)) throw retryableStatusFailure(res);
      if (res.status === 200) throw fileChangedError({ url: this.url, what: 'the server stopped honouring Range' });
      throw httpStatusError(this.url, res.status, res.statusText, step, rangeHeader);
    }
    const expected = this.size - from;
    let received = 0;
    const reader = res.body?.getReader();
    if (reader === undefined) throw new RetryableFailure('the response has no body');
    try {
      for (;;) {
        const { done, value } = await readOrAbort(reader, attempt.signal);
        if (done) break;
        if (received + value.byteLength > expected) {
          throw new LlmError(
            'network',
            `${step}: the server sent more than the ${expected} bytes left in the file; nothing more was stored`,
            {
              details: { url: this.url, expected },
            },
          );
        }
        received += value.byteLength;
        attempt.progressed();
        await sink(value);
        this.receivedBytes += value.byteLength;
      }
    } catch (e) {
      void reader.cancel().catch(() => undefined);
      if (e instanceof LlmError || e instanceof RetryableFailure) throw e;
      throw new RetryableFailure(`connection dropped after ${received} bytes (${String(e)})`, null, { cause: e });
    }
    if (received < expected) throw new RetryableFailure(`short body: ${received} of ${expected} bytes arrived`);
  }

  /**
   * Probes `url` with `Range: bytes=0-0` to learn its size and validators (ETag, Last-Modified). A server answering
   * 200 is streamed into memory when the body fits `maxFullBodyBytes`, else `LlmError('range-unsupported')`.
   */
  static async open(url: string | URL, options: RangeReaderOptions = {}): Promise<RangeReader> {
    const href = String(url);
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== 'function') {
      throw new LlmError('network', `opening ${href}: no fetch() in this environment; pass options.fetch`, {
        details: { url: href },
      });
    }
    const settings: Settings = {
      maxInFlight: positive(options.maxInFlight, DEFAULTS.maxInFlight, 'maxInFlight'),
      chunkBytes: positive(options.chunkBytes, DEFAULTS.chunkBytes, 'chunkBytes'),
      retries: nonNegative(options.retries, DEFAULTS.retries, 'retries'),
      retryDelayMs: nonNegative(options.retryDelayMs, DEFAULTS.retryDelayMs, 'retryDelayMs'),
      maxRetryDelayMs: DEFAULTS.maxRetryDelayMs,
      stallTimeoutMs: positive(options.stallTimeoutMs, DEFAULTS.stallTimeoutMs, 'stallTimeoutMs'),
      maxFullBodyBytes: nonNegative(options.maxFullBodyBytes, DEFAULTS.maxFullBodyBytes, 'maxFullBodyBytes'),
      maxRetryAfterMs: nonNegative(options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs, 'maxRetryAfterMs'),
      headers: options.headers,
      onProgress: options.onProgress,
      fetch: fetchFn,
    };
    const step = `probing ${href}`;
    const probe = await withRetries(href, step, settings, options.signal, async (attempt) => {
      const res = await doFetch(settings, href, { Range: 'bytes=0-0' }, attempt.signal);
      if (res.status === 206) {
        const range = parseContentRange(res.headers.get('content-range'));
        await res.arrayBuffer().catch(() => undefined);
        if (range === null || range.total === null || range.start !== 0 || range.end !== 0) {
          throw new LlmError(
            'range-unsupported',
            `${step}: the 206 response has no Content-Range of bytes 0-0 with a ` +
              `total (${res.headers.get('content-range') ?? 'header missing or not exposed by CORS'}), so the file size is unknown`,
            {
              details: { url: href },
            },
          );
        }
        return { size: range.total, res, body: null };
      }
      if (res.status === 416) {
        const range = parseContentRange(res.headers.get('content-range'));
        await res.body?.cancel().catch(() => undefined);
        if (range !== null && range.total === 0) return { size: 0, res, body: null };
        throw httpStatusError(href, res.status, res.statusText, step, 'bytes=0-0');
      }
      if (res.status === 200) {
        const body = await readFullBody(href, res, settings.maxFullBodyBytes, settings.onProgress, attempt);
        return { size: body.byteLength, res, body };
      }
      await res.body?.cancel().catch(() => undefined);
      if (isRetryableStatus(res.status)) throw retryableStatusFailure(res);
      throw httpStatusError(href, res.status, res.statusText, step, 'bytes=0-0');
    });
    const reader = new RangeReader(
      href,
      probe.size,
      probe.res.headers.get('etag'),
      probe.res.headers.get('last-modified'),
      linkedSha256Of(probe.res.headers.get('x-linked-etag')),
      probe.body,
      settings,
    );
    if (probe.body !== null) reader.receivedBytes = probe.size;
    return reader;
  }

  /**
   * Reads bytes `[offset, offset + length)`. Ranges longer than `chunkBytes` are fetched as parallel requests (at most
   * `maxInFlight` for the whole reader). Rejects with `LlmError('network')` (including the file-changed error, see
   * `isFileChangedError`), `LlmError('gguf-invalid')` for a range outside the file, or `LlmError('aborted')`.
   */
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal, `read of ${this.url}`);
    checkReadRange(this.url, this.size, offset, length);
    if (this.fullBody !== null) return this.fullBody.subarray(offset, offset + length);
    const out = new Uint8Array(length); // (length) bytes of [offset, offset + length)
    const { chunkBytes, maxInFlight } = this.settings;
    const partCount = Math.ceil(length / chunkBytes);
    // A few workers per read pull parts in order (fewer listeners than one task per part); the shared limiter bounds
    // requests across all reads. One failed part aborts its siblings, so a failed read returns promptly.
    const partAbort = linkSignals(signal);
    let nextPart = 0;
    let firstError: unknown;
    const worker = async (): Promise<void> => {
      try {
        while (nextPart < partCount) {
          const pos = nextPart++ * chunkBytes;
          const partLength = Math.min(chunkBytes, length - pos);
          await this.fetchPart(offset + pos, out.subarray(pos, pos + partLength), partAbort.signal);
        }
      } catch (e) {
        if (firstError === undefined) {
          firstError = e;
          partAbort.abort(e);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(maxInFlight, partCount) }, worker));
    } finally {
      partAbort.dispose();
    }
    if (firstError !== undefined) {
      rethrowIfAborted(firstError, signal, `read of ${this.url}`);
      throw firstError;
    }
    return out;
  }

  /** Fills `into` with the bytes at `start…`, resuming after the last byte received whenever an attempt fails. */
  private async fetchPart(start: number, into: Uint8Array, signal: AbortSignal): Promise<void> {
    const release = await this.limiter.acquire(signal, `read of ${this.url}`);
    try {
      let filled = 0;
      const step = `reading bytes ${start}-${start + into.byteLength - 1} of ${this.url}`;
      await withRetries(this.url, step, this.settings, signal, async (attempt) => {
        const first = start + filled;
        const last = start + into.byteLength - 1;
        const rangeHeader = `bytes=${first}-${last}`;
        const headers: Record<string, string> = { Range: rangeHeader };
        const ifRange = this.isIfRangeBlocked ? null : ifRangeValue(this);
        if (ifRange !== null) headers['If-Range'] = ifRange;
        let res: Response;
        try {
          res = await doFetch(this.settings, this.url, headers, attempt.signal);
        } catch (e) {
          // If-Range is not a CORS-safelisted header: a cross-origin server that rejects it in the preflight fails
          // the fetch with a TypeError. Retry without it; every 206's ETag/Last-Modified/size is still compared.
          if (e instanceof TypeError && ifRange !== null) this.isIfRangeBlocked = true;
          throw e;
        }
        if (res.status !== 206) {
          await res.body?.cancel().catch(() => undefined);
          if (res.status === 200) {
            // Per If-Range, a 200 means "the validator no longer matches": the file changed.
            throw fileChangedError({
              url: this.url,
              what: versionMismatch(this, res, null) ?? 'the server answered a range request with the whole new file',
            });
          }
          if (isRetryableStatus(res.status)) throw retryableStatusFailure(res);
          throw httpStatusError(this.url, res.status, res.statusText, step, rangeHeader);
        }
        // A 206 is only trusted with a Content-Range naming exactly the bytes asked for, out of the known size.
        const contentRange = res.headers.get('content-range');
        const range = parseContentRange(contentRange);
        if (range === null) {
          await res.body?.cancel().catch(() => undefined);
          throw new LlmError(
            'range-unsupported',
            `${step}: the server answered ${rangeHeader} with a 206 but ` +
              `${contentRange === null ? 'no Content-Range (missing, or not exposed by CORS)' : `a malformed Content-Range '${contentRange}'`}; ` +
              'without it the bytes cannot be placed, so nothing was stored: serve the file with valid Range support ' +
              '(and Access-Control-Expose-Headers: Content-Range)',
            { details: { url: this.url, range: rangeHeader, contentRange } },
          );
        }
        const changed = versionMismatch(this, res, range.total);
        if (changed !== null) {
          await res.body?.cancel().catch(() => undefined);
          throw fileChangedError({ url: this.url, what: changed });
        }
        if (range.start !== first || range.end !== last || range.total !== this.size) {
          await res.body?.cancel().catch(() => undefined);
          throw new LlmError(
            'network',
            `${step}: asked for ${rangeHeader} of a ${this.size}-byte file but the server sent ` +
              `Content-Range '${contentRange}'; the server's Range support is broken, so nothing was stored`,
            {
              details: { url: this.url, range: rangeHeader, contentRange },
            },
          );
        }
        await streamBody(
          res,
          into.subarray(filled),
          attempt,
          (n) => {
            filled += n;
            this.receivedBytes += n;
            reportProgress(this.settings.onProgress, {
              phase: 'download',
              loadedBytes: Math.min(this.receivedBytes, this.size),
              totalBytes: this.size,
              url: this.url,
            });
          },
          step,
        );
        if (filled < into.byteLength) {
          throw new RetryableFailure(`short body: ${filled - (first - start)} of ${last - first + 1} bytes arrived`);
        }
      });
    } finally {
      release();
    }
  }
}

/** Issues one GET with the reader's headers plus `extra`; fetch `TypeError`s are left for `withRetries`. */
function doFetch(
  settings: Settings,
  url: string,
  extra: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  const fetchFn = settings.fetch; // called unbound: browsers throw "Illegal invocation" for fetch with another `this`
  return fetchFn(url, {
    method: 'GET',
    headers: { ...settings.headers, ...extra },
    signal,
    cache: 'no-store', // ranged reads must reach the server: an HTTP cache may hold a different version
  });
}

/** The sha256 in an `X-Linked-Etag` value (`"<64 hex>"`, possibly weak), lowercased; null for anything else. */
function linkedSha256Of(header: string | null): string | null {
  const m = header === null ? null : /^\s*(?:W\/)?"?([0-9a-f]{64})"?\s*$/i.exec(header);
  return m === null ? null : m[1].toLowerCase();
}

function positive(v: number | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  if (!Number.isFinite(v) || v < 1)
    throw new LlmError('invalid-request', `RangeReader option ${name} must be ≥ 1, got ${v}`);
  return Math.floor(v);
}

function nonNegative(v: number | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  if (!Number.isFinite(v) || v < 0)
    throw new LlmError('invalid-request', `RangeReader option ${name} must be ≥ 0, got ${v}`);
  return v;
}
