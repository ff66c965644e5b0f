/**
 * `SlotLimiter`: a counting semaphore bounding how many requests a reader has in flight. Waiters are served in
 * arrival order; a waiter whose signal aborts leaves the queue at once with `LlmError('aborted')`.
 */

import { LlmError } from '../errors.js';

interface Waiter {
  grant: () => void;
}

/** At most `slots` holders at a time; `acquire` resolves with the function that releases the slot. */
export class SlotLimiter {
  private free: number;
  private readonly queue: Waiter[] = [];

  constructor(readonly slots: number) {
    if (!Number.isSafeInteger(slots) || slots < 1) {
      throw new LlmError('invalid-request', `SlotLimiter needs at least 1 slot, got ${slots}`);
    }
    this.free = slots;
  }

  /** Number of holders right now (for tests and diagnostics). */
  get inUse(): number {
    return this.slots - this.free;
  }

  /** Waits for a slot. The returned release function is idempotent. */
  acquire(signal: AbortSignal | undefined, step: string): Promise<() => void> {
    if (signal?.aborted)
      return Promise.reject(new LlmError('aborted', `${step} was aborted`, { cause: signal.reason }));
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = (): void => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new LlmError('aborted', `${step} was aborted`, { cause: signal?.reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next !== undefined)
        next.grant(); // the slot passes straight to the next waiter
      else this.free++;
    };
  }
}
