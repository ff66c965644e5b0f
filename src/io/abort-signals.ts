/**
 * Abort plumbing shared by the byte sources: linking a caller's `AbortSignal` to a per-attempt one (so a stalled
 * request can be cancelled and retried without cancelling the caller), an abortable delay for retry backoff, and the
 * mapping of DOM `AbortError`s to `LlmError('aborted')`.
 */

import { LlmError } from '../errors.js';

/** A per-attempt controller whose signal also fires when any parent signal fires. Call `dispose` when done. */
export interface LinkedAbort {
  /** Aborts when `abort()` is called or any parent signal aborts. */
  readonly signal: AbortSignal;
  /** Aborts this attempt only (parents are untouched). */
  abort(reason?: unknown): void;
  /** Detaches the listeners from the parents. */
  dispose(): void;
}

/** Creates a `LinkedAbort` following every defined signal in `parents`. */
export function linkSignals(...parents: (AbortSignal | undefined)[]): LinkedAbort {
  const controller = new AbortController();
  const detach: (() => void)[] = [];
  for (const parent of parents) {
    if (parent === undefined) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    const onAbort = (): void => controller.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    detach.push(() => parent.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    abort: (reason?: unknown) => controller.abort(reason),
    dispose: () => {
      for (const d of detach) d();
      detach.length = 0;
    },
  };
}

/** Resolves after `ms` milliseconds; rejects with `LlmError('aborted')` as soon as `signal` aborts. */
export function abortableDelay(ms: number, signal: AbortSignal | undefined, step: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new LlmError('aborted', `${step} was aborted`, { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new LlmError('aborted', `${step} was aborted`, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** True for the errors `fetch`, streams and IndexedDB raise when their signal aborts. */
export function isAbortError(e: unknown): boolean {
  return (
    (e instanceof LlmError && e.code === 'aborted') ||
    (typeof e === 'object' && e !== null && 'name' in e && (e.name === 'AbortError' || e.name === 'TimeoutError'))
  );
}

/**
 * Rethrows `e` as `LlmError('aborted')` when `signal` (the caller's) has aborted, so every cancelled call rejects with
 * the same code whatever layer noticed the abort first. Returns normally otherwise.
 */
export function rethrowIfAborted(e: unknown, signal: AbortSignal | undefined, step: string): void {
  if (e instanceof LlmError && e.code === 'aborted') throw e;
  if (signal?.aborted) throw new LlmError('aborted', `${step} was aborted`, { cause: signal.reason });
}
