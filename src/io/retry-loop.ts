/**
 * The retry loop behind every HTTP request of the range reader: exponential backoff with jitter, a stall timer per
 * attempt (a silent connection is cancelled and retried), and a failure count that resets whenever an attempt made
 * progress — so a connection that keeps dropping after delivering some bytes still finishes, resuming each time.
 */

import { abortableDelay, isAbortError, linkSignals, rethrowIfAborted } from './abort-signals.js';
import { LlmError, throwIfAborted } from '../errors.js';
import { RetryableFailure, retriesExhaustedError } from './http-response-checks.js';

/** How hard to retry. */
export interface RetryPolicy {
  /** Consecutive failed attempts without new bytes before giving up. */
  readonly retries: number;
  /** First backoff delay; doubles after every failure without progress, up to `maxRetryDelayMs`. */
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  /** An attempt that receives no byte for this long is cancelled and retried. */
  readonly stallTimeoutMs: number;
  /**
   * Longest `Retry-After` (429/503) honoured: a shorter one is waited out exactly (instead of the backoff), a longer
   * one ends the retries at once with `LlmError('network')` (`details.retryAfterMs`), since the server asked not to
   * be contacted before then.
   */
  readonly maxRetryAfterMs: number;
  /**
   * False: every failed attempt counts, even one that received bytes (for transfers that restart from zero, where
   * progress does not carry over). Default true.
   */
  readonly resetOnProgress?: boolean;
}

/** One attempt of a retried operation: its own abort signal (stall timeouts abort only it) and a progress hook. */
export interface Attempt {
  readonly signal: AbortSignal;
  /** Call whenever bytes arrive: re-arms the stall timer and resets the failure count. */
  progressed(): void;
}

/**
 * Runs `body` until it succeeds, retrying `RetryableFailure`s (and fetch `TypeError`s, stalls) with exponential
 * backoff. The failure count resets whenever an attempt received bytes, so a connection that keeps dropping after
 * some progress still finishes. Other errors pass through unchanged.
 */
export async function withRetries<T>(
  url: string,
  step: string,
  settings: RetryPolicy,
  signal: AbortSignal | undefined,
  body: (attempt: Attempt) => Promise<T>,
): Promise<T> {
  let failures = 0;
  let attempts = 0;
  for (;;) {
    throwIfAborted(signal, step);
    attempts++;
    const link = linkSignals(signal);
    let madeProgress = false;
    let stallTimer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(
        () => link.abort(new RetryableFailure(`no data for ${settings.stallTimeoutMs} ms`)),
        settings.stallTimeoutMs,
      );
    };
    arm();
    try {
      return await body({
        signal: link.signal,
        progressed: () => {
          madeProgress = true;
          arm();
        },
      });
    } catch (e) {
      rethrowIfAborted(e, signal, step);
      let failure: RetryableFailure;
      if (e instanceof RetryableFailure) failure = e;
      else if (link.signal.aborted && link.signal.reason instanceof RetryableFailure) failure = link.signal.reason;
      else if (e instanceof TypeError || (isAbortError(e) && link.signal.aborted))
        failure = new RetryableFailure(String(e), null, { cause: e });
      else throw e;
      failures = madeProgress && settings.resetOnProgress !== false ? 1 : failures + 1;
      if (failures > settings.retries) throw retriesExhaustedError(url, step, attempts, failure);
      if (failure.retryAfterMs !== null) {
        if (failure.retryAfterMs > settings.maxRetryAfterMs)
          throw retryAfterTooLongError(url, step, failure, settings.maxRetryAfterMs);
        await abortableDelay(failure.retryAfterMs, signal, step);
        continue;
      }
      const delayMs = Math.min(settings.maxRetryDelayMs, settings.retryDelayMs * 2 ** (failures - 1));
      await abortableDelay(delayMs * (0.75 + 0.5 * Math.random()), signal, step);
    } finally {
      clearTimeout(stallTimer);
      link.dispose();
    }
  }
}

/** The error for a `Retry-After` longer than the caller allows waiting. */
function retryAfterTooLongError(url: string, step: string, failure: RetryableFailure, maxMs: number): LlmError {
  const retryAfterMs = failure.retryAfterMs ?? 0;
  return new LlmError(
    'network',
    `${step}: GET ${url} answered ${failure.message} and asks to retry after ` +
      `${Math.ceil(retryAfterMs / 1000)} s, longer than the ${Math.round(maxMs / 1000)} s allowed (maxRetryAfterMs); ` +
      'try again later',
    { cause: failure, details: { url, status: failure.status, retryAfterMs } },
  );
}
