/**
 * How the range reader judges one HTTP response: `Content-Range` parsing, which statuses are worth retrying, the
 * clear `LlmError('network')` for the rest, and the "file changed on the server" error that guarantees bytes of two
 * versions of a file are never mixed. Kept apart from the transfer loop so the rules read as one table.
 */

import { LlmError } from '../errors.js';

/** A parsed `Content-Range: bytes start-end/total` header (`end` inclusive; `total` null for `*`). */
export interface ContentRange {
  readonly start: number;
  readonly end: number;
  readonly total: number | null;
}

/** Parses `bytes a-b/N`, `bytes a-b/*` or (416 form) `bytes * /N`; null when absent or malformed. */
export function parseContentRange(header: string | null): ContentRange | null {
  if (header === null) return null;
  const unsatisfied = /^\s*bytes\s+\*\/(\d+)\s*$/i.exec(header);
  if (unsatisfied) return { start: -1, end: -1, total: Number(unsatisfied[1]) };
  const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(header);
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? null : Number(m[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return null;
  if (total !== null && (!Number.isSafeInteger(total) || end >= total)) return null;
  return { start, end, total };
}

/**
 * A failure worth another attempt (dropped connection, short body, stall, 5xx, 408, 429, fetch `TypeError`).
 * Internal to io/: it never reaches a caller; after the last retry it becomes `LlmError('network')`.
 */
export class RetryableFailure extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    options?: { cause?: unknown; retryAfterMs?: number | null },
  ) {
    super(message, options);
    this.name = 'RetryableFailure';
    this.retryAfterMs = options?.retryAfterMs ?? null;
  }

  /** The server's `Retry-After` (429/503), in ms from now; null when it sent none (or an unparsable one). */
  readonly retryAfterMs: number | null;
}

/** The `RetryableFailure` for a retryable status, carrying the response's `Retry-After` when there is one. */
export function retryableStatusFailure(res: Response): RetryableFailure {
  return new RetryableFailure(`HTTP ${res.status}`, res.status, {
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after')),
  });
}

/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds from `nowMs`: delay-seconds (`120`) or an HTTP-date (a date in
 * the past is 0). Null when absent or malformed. (A cross-origin page sees it only if the server exposes it.)
 */
export function parseRetryAfter(header: string | null, nowMs = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null; // a bare negative or fractional number is not an HTTP-date either
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

/** Statuses that a later attempt may well turn into success. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || (status >= 500 && status <= 599);
}

/** The `LlmError('network')` for a status that no retry will fix, with the next action in the message. */
export function httpStatusError(
  url: string,
  status: number,
  statusText: string,
  step: string,
  range?: string,
): LlmError {
  const what = `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
  let hint: string;
  if (status === 404 || status === 410) hint = 'the file does not exist there; check the model URL';
  else if (status === 401 || status === 403)
    hint = 'the server refused access; the file may be private, gated or the link expired';
  else if (status === 416)
    hint = `the server rejected the byte range${range ? ` ${range}` : ''}; the file may have changed size, reload it`;
  else hint = 'the server rejected the request';
  return new LlmError('network', `${step}: GET ${url} failed with ${what}: ${hint}`, {
    details: { url, status, ...(range !== undefined ? { range } : {}) },
  });
}

/** The `LlmError('network')` raised when retries run out. */
export function retriesExhaustedError(url: string, step: string, attempts: number, last: RetryableFailure): LlmError {
  const isFetchFailure = last.status === null && last.cause instanceof TypeError;
  const hint = isFetchFailure
    ? 'the server is unreachable, or it blocks cross-origin requests (CORS: it must allow this origin and expose ' +
      'Content-Range, Content-Length and ETag); check the URL and your connection'
    : 'check your connection and try again later';
  return new LlmError('network', `${step}: GET ${url} failed after ${attempts} attempts (${last.message}): ${hint}`, {
    cause: last,
    details: { url, status: last.status, attempts },
  });
}

/** Why a file-changed error was raised: which validator differed and how. */
export interface FileChange {
  readonly url: string;
  readonly what: string;
}

/**
 * The error for a file that changed on the server while it was being read. Callers that can start over (the model
 * store) do so; a random-access `HttpByteSource`, whose earlier reads were already handed out, cannot and surfaces it.
 */
export function fileChangedError(change: FileChange): LlmError {
  return new LlmError(
    'network',
    `reading ${change.url}: the file changed on the server (${change.what}); bytes of the two versions are never ` +
      'mixed, so this read was stopped: open the model again to read the new version',
    { details: { url: change.url, reason: 'file-changed', change: change.what } },
  );
}

/** True for the error from `fileChangedError`. */
export function isFileChangedError(e: unknown): e is LlmError {
  return e instanceof LlmError && e.code === 'network' && e.details?.reason === 'file-changed';
}

/** Validators identifying one version of a remote file (either may be null when the server sends none). */
export interface FileVersion {
  readonly size: number;
  readonly etag: string | null;
  readonly lastModified: string | null;
}

/**
 * Describes how `res` differs from `version` (ETag, Last-Modified or total size), or returns null when nothing the
 * server told us contradicts it. Headers the server (or CORS) does not expose cannot be compared and are skipped.
 */
export function versionMismatch(version: FileVersion, res: Response, total: number | null): string | null {
  const etag = res.headers.get('etag');
  if (version.etag !== null && etag !== null && etag !== version.etag) return `ETag ${version.etag} → ${etag}`;
  const lastModified = res.headers.get('last-modified');
  if (version.lastModified !== null && lastModified !== null && lastModified !== version.lastModified) {
    return `Last-Modified ${version.lastModified} → ${lastModified}`;
  }
  if (total !== null && total !== version.size) return `size ${version.size} → ${total} bytes`;
  return null;
}

/**
 * The `If-Range` value for `version`: a strong ETag, else (no ETag at all) Last-Modified, else null. A weak ETag is
 * never usable: it never matches in `If-Range`, and a client that has one must not send a date instead (RFC 9110
 * §13.1.5) — such a file is read through one response instead (`stream-download.ts`).
 */
export function ifRangeValue(version: FileVersion): string | null {
  if (version.etag !== null) return version.etag.startsWith('W/') ? null : version.etag;
  return version.lastModified;
}
